package main

import (
	"context"
	"fmt"
	"io"

	"github.com/astraldeep/astralvessel-go/deployer/localstack"
	"github.com/astraldeep/astralvessel-go/vessel/client"
)

func init() {
	register(&command{
		name:    "task",
		usage:   "task [--agent ID] [--url URL --key KEY --user U] [--state DIR] TASK_ID",
		summary: "show a task's state and, once it ended, its answer (a turn started with ask --background)",
		run:     runTask,
	})
}

func runTask(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("task", stderr)
	agent := fs.String("agent", "", "agent id (default: the first agent)")
	url := fs.String("url", "", "vessel base URL (default: the running local stack)")
	key := fs.String("key", "", "app key (default: $VESSEL_APP_KEY, or the local stack's key)")
	user := fs.String("user", "", "X-Vessel-User (default: $VESSEL_USER, or \"local\")")
	state := fs.String("state", localstack.DefaultStateDir(), "state folder of the local stack")
	pos, code, ok := parseFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 || pos[0] == "" {
		usageError("task", stderr)
		return 2
	}
	t, err := resolveTarget(*url, *key, *user, *agent, *state)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel task: %v\n", err)
		return 1
	}
	c, err := client.New(t.url, t.agent, client.Options{AppKey: t.key, User: t.user})
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel task: %v\n", err)
		return 1
	}
	res, err := c.Get(context.Background(), pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel task: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "task %s: %s\n", pos[0], res.State)
	if res.Approval != nil {
		fmt.Fprintln(stdout, "waiting for approval: astralvessel approve decides it")
	}
	if md := res.Markdown(); md != "" {
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, md)
	}
	return 0
}

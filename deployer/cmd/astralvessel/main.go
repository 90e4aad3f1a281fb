// Command astralvessel checks and deploys AstralVessel deployments:
//
//	astralvessel validate FILE
//	astralvessel deploy FILE [--out DIR] [--source DIR]
//
// Each subcommand lives in its own file and registers itself in init.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand. run gets the arguments after the command name
// and returns the process exit code: 0 success, 1 failure, 2 usage error.
type command struct {
	name    string
	usage   string // e.g. "validate FILE"
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is the dispatch table; files add to it with register.
var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("astralvessel: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "astralvessel: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: astralvessel COMMAND [ARGS]")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-40s %s\n", commands[n].usage, commands[n].summary)
	}
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("deploy FILE --out DIR") and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

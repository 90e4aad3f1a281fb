package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// The operator commands talk to a vessel's operator API on its metrics
// listener (docs/operations.md, "Running turns").
func init() {
	register(&command{name: "turns", usage: "turns [--vessel URL] [--token-file FILE]",
		summary: "list the turns running or paused on a vessel (its operator API)",
		help:    operatorHelp, run: runTurns})
	register(&command{name: "cancel", usage: "cancel [--vessel URL] [--token-file FILE] TASK",
		summary: "cancel one running or paused turn by its task id (its operator API)",
		help:    operatorHelp, run: runCancel})
}

const operatorHelp = `--vessel is the base URL of the vessel's metrics listener (default $VESSEL_OPERATOR_URL or
http://127.0.0.1:9700); the token is read from --token-file, $VESSEL_OPERATOR_TOKEN_FILE or
$VESSEL_OPERATOR_TOKEN, the same token the vessel was given. Each replica lists and cancels only
its own turns.`

type operatorFlags struct {
	base, tokenFile string
}

func parseOperator(name string, args []string, stderr io.Writer) (*flag.FlagSet, *operatorFlags, bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &operatorFlags{}
	def := os.Getenv("VESSEL_OPERATOR_URL")
	if def == "" {
		def = "http://127.0.0.1:9700"
	}
	fs.StringVar(&o.base, "vessel", def, "base URL of the vessel's metrics listener")
	fs.StringVar(&o.tokenFile, "token-file", os.Getenv("VESSEL_OPERATOR_TOKEN_FILE"), "file holding the operator token")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: astralvessel "+name+" [flags]\n\n"+operatorHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, false
	}
	return fs, o, true
}

func (o *operatorFlags) token() (string, error) {
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return "", fmt.Errorf("operator token: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if t := strings.TrimSpace(os.Getenv("VESSEL_OPERATOR_TOKEN")); t != "" {
		return t, nil
	}
	return "", errors.New("no operator token: pass --token-file or set VESSEL_OPERATOR_TOKEN_FILE or VESSEL_OPERATOR_TOKEN")
}

// call sends one operator request and decodes the JSON answer into out.
func (o *operatorFlags) call(method, path string, out any) error {
	u, err := url.Parse(strings.TrimRight(o.base, "/") + path)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--vessel %q: want http(s)://host:port", o.base)
	}
	tok, err := o.token()
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, u.String(), nil)
	if err != nil {
		return fmt.Errorf("operator request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("operator API: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("operator API: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("operator API: %s: %s", resp.Status, e.Error)
		}
		return fmt.Errorf("operator API: %s", resp.Status)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("operator API: bad answer: %w", err)
	}
	return nil
}

type turnRow struct {
	Task, Context, Agent, Owner, State string
	Started                            time.Time
}

func runTurns(args []string, stdout, stderr io.Writer) int {
	fs, o, ok := parseOperator("turns", args, stderr)
	if !ok {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "astralvessel turns: no arguments expected")
		return 2
	}
	var ans struct{ Turns []turnRow }
	if err := o.call(http.MethodGet, "/v1/operator/turns", &ans); err != nil {
		fmt.Fprintln(stderr, "astralvessel turns:", err)
		return 1
	}
	if len(ans.Turns) == 0 {
		fmt.Fprintln(stdout, "no turns running")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tAGENT\tOWNER\tSTATE\tRUNNING FOR")
	for _, t := range ans.Turns {
		age := "-"
		if !t.Started.IsZero() {
			age = time.Since(t.Started).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Task, t.Agent, t.Owner, t.State, age)
	}
	_ = tw.Flush()
	return 0
}

func runCancel(args []string, stdout, stderr io.Writer) int {
	fs, o, ok := parseOperator("cancel", args, stderr)
	if !ok {
		return 2
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		fmt.Fprintln(stderr, "usage: astralvessel cancel [--vessel URL] [--token-file FILE] TASK")
		return 2
	}
	var ans struct{ Task, State string }
	if err := o.call(http.MethodPost, "/v1/operator/turns/"+url.PathEscape(fs.Arg(0))+"/cancel", &ans); err != nil {
		fmt.Fprintln(stderr, "astralvessel cancel:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", ans.Task, ans.State)
	return 0
}

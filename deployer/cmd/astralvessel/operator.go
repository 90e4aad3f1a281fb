package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	"github.com/astraldeep/astralvessel-go/deployer/localstack"
)

// The operator commands talk to a vessel's operator API on its metrics
// listener (docs/operations.md, "Running turns").
func init() {
	register(&command{name: "turns", usage: "turns [--vessel URL] [--token-file FILE] [--deploy-dir DIR] [--state DIR]",
		summary: "list the turns running or paused on a vessel (its operator API)",
		help:    operatorHelp, run: runTurns})
	register(&command{name: "cancel", usage: "cancel [--vessel URL] [--token-file FILE] [--deploy-dir DIR] [--state DIR] TASK",
		summary: "cancel one running or paused turn by its task id (its operator API)",
		help:    operatorHelp, run: runCancel})
}

const operatorHelp = `The token is the one the vessel was given: --token-file, else $VESSEL_OPERATOR_TOKEN_FILE, else
$VESSEL_OPERATOR_TOKEN, else the one astralvessel deploy wrote (--deploy-dir, default the current folder:
DIR/.generated/operator.token), else the running local stack's (--state: its stack.json).
--vessel is the base URL of the vessel's metrics listener: else $VESSEL_OPERATOR_URL, else the one
astralvessel deploy wrote (DIR/operator.url) when its token is used, else the local stack's first
vessel when its token is used. Each replica lists and cancels only its own turns.`

type operatorFlags struct {
	base, tokenFile, deployDir, state string
}

func parseOperator(name string, args []string, stderr io.Writer) (*flag.FlagSet, *operatorFlags, bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &operatorFlags{}
	fs.StringVar(&o.base, "vessel", "", "base URL of the vessel's metrics listener (see above for the default)")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the operator token")
	fs.StringVar(&o.deployDir, "deploy-dir", ".", "the folder astralvessel deploy wrote (--out), holding .generated/"+compose.OperatorTokenFile)
	fs.StringVar(&o.state, "state", localstack.DefaultStateDir(), "the local stack's state folder")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: astralvessel "+name+" [flags]\n\n"+operatorHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, false
	}
	return fs, o, true
}

// target finds the operator API's base URL and token (operatorHelp).
func (o *operatorFlags) target() (base, token string, err error) {
	base = o.base
	if base == "" {
		base = os.Getenv("VESSEL_OPERATOR_URL")
	}
	file := o.tokenFile
	if file == "" {
		file = os.Getenv("VESSEL_OPERATOR_TOKEN_FILE")
	}
	if file == "" {
		token = strings.TrimSpace(os.Getenv("VESSEL_OPERATOR_TOKEN"))
	}
	if file == "" && token == "" {
		deployed := filepath.Join(o.deployDir, compose.GeneratedDir, compose.OperatorTokenFile)
		_, serr := os.Stat(deployed)
		if serr == nil {
			file = deployed
			if base == "" {
				if base, err = deployedURL(o.deployDir); err != nil {
					return "", "", err
				}
			}
		} else if errors.Is(serr, fs.ErrPermission) {
			// The deploy's output folder is root's (0700): say so rather
			// than fall back to a local stack that is not there.
			return "", "", fmt.Errorf("operator token: %w; %s is readable by the user who deployed only (run this with sudo, "+
				"or copy the token somewhere of yours and pass --token-file)", serr, filepath.Dir(deployed))
		} else if info, ierr := localstack.ReadInfo(o.state); ierr == nil && info.OperatorTokenFile != "" {
			file = info.OperatorTokenFile
			if base == "" {
				base = info.OperatorURL
			}
		} else {
			return "", "", fmt.Errorf("no operator token: none in %s and no local stack in %s; pass --token-file, --deploy-dir "+
				"or --state, or set VESSEL_OPERATOR_TOKEN_FILE", deployed, o.state)
		}
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("operator token: %w", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return "", "", fmt.Errorf("operator token: %s is empty", file)
		}
	}
	if base == "" {
		return "", "", errors.New("no operator API URL: pass --vessel http://HOST:PORT (the vessel's metrics listener), " +
			"set VESSEL_OPERATOR_URL, or pass --deploy-dir DIR (the folder astralvessel deploy wrote, holding " + compose.OperatorURLFile + ")")
	}
	return base, token, nil
}

// deployedURL reads the operator API's URL astralvessel deploy wrote beside
// the Compose file.
func deployedURL(dir string) (string, error) {
	p := filepath.Join(dir, compose.OperatorURLFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("operator API URL: %w; run astralvessel deploy again (it writes %s), or pass --vessel "+
			"or set VESSEL_OPERATOR_URL", err, compose.OperatorURLFile)
	}
	u := strings.TrimSpace(string(b))
	if u == "" {
		return "", fmt.Errorf("operator API URL: %s is empty; run astralvessel deploy again, or pass --vessel", p)
	}
	return u, nil
}

// call sends one operator request and decodes the JSON answer into out.
func (o *operatorFlags) call(method, path string, out any) error {
	base, tok, err := o.target()
	if err != nil {
		return err
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + path)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--vessel %q: want http(s)://host:port", base)
	}
	req, err := http.NewRequest(method, u.String(), nil)
	if err != nil {
		return fmt.Errorf("operator request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("operator API at %s: %w; is the deployment up (docker compose ps: vessel healthy)? "+
			"Otherwise pass --vessel or set VESSEL_OPERATOR_URL to its metrics listener", base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("operator API: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := resp.Status
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			msg += ": " + e.Error
		}
		if resp.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("operator API at %s: %s; pass --token-file with the token the vessel was given "+
				"(its VESSEL_OPERATOR_TOKEN_FILE; a deploy's is DIR/%s/%s, found with --deploy-dir DIR)", base, msg,
				compose.GeneratedDir, compose.OperatorTokenFile)
		}
		return fmt.Errorf("operator API: %s", msg)
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
		fmt.Fprintln(stderr, "usage: astralvessel cancel [--vessel URL] [--token-file FILE] [--deploy-dir DIR] [--state DIR] TASK")
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

// Command astralvessel checks and deploys AstralVessel deployments:
//
//	astralvessel validate FILE
//	astralvessel deploy FILE [--out DIR] [--source DIR]
//	astralvessel up [FILE]
//	astralvessel ask "question"
//	astralvessel turns [--vessel URL]
//	astralvessel cancel [--vessel URL] TASK
//	astralvessel --version
//
// Each subcommand lives in its own file and registers itself in init.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
)

// command is one subcommand. run gets the arguments after the command name
// and returns the process exit code: 0 success, 1 failure, 2 usage error.
type command struct {
	name    string
	usage   string // e.g. "validate FILE"
	summary string
	help    string // more about the arguments, for --help
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
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"--help"}, stdout, stderr)
			}
		}
		usage(stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, versionLine())
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
	fmt.Fprintln(w, "usage: astralvessel COMMAND [ARGS]   (astralvessel COMMAND --help for its flags)")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %s\n      %s\n", commands[n].usage, commands[n].summary)
	}
	fmt.Fprintln(w, "  --version\n      print the version and the commit it was built from")
}

// version and commit are set at build time with
// -ldflags "-X main.version=... -X main.commit=..." (the Makefile and
// deploy/local-demo.sh do); without them the module version (or "dev") and
// the VCS revision Go stamped into the build info are printed.
var version, commit string

// versionLine is "astralvessel VERSION (commit REV[, modified])".
func versionLine() string {
	v, rev, modified := version, commit, false
	if bi, ok := debug.ReadBuildInfo(); ok && rev == "" {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if rev == "" {
		return fmt.Sprintf("astralvessel %s (commit unknown: built without -ldflags -X main.commit or VCS stamping)", v)
	}
	if modified {
		rev += ", modified"
	}
	return fmt.Sprintf("astralvessel %s (commit %s)", v, rev)
}

// newFlags is a subcommand's flag set: errors go to stderr, --help to
// stdout (see parseFlags).
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // parseFlags prints the help or the usage line
	return fs
}

// parseFlags parses a subcommand's arguments. ok is false when the command
// should exit with code: 0 after --help (its usage, arguments and flags on
// stdout), 2 after a flag error (the error and the usage line on stderr).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		commandHelp(fs, stdout)
		return nil, 0, false
	}
	if err != nil {
		usageError(fs.Name(), stderr)
		return nil, 2, false
	}
	return pos, 0, true
}

// commandHelp prints a subcommand's usage line, summary and flags.
func commandHelp(fs *flag.FlagSet, w io.Writer) {
	c := commands[fs.Name()]
	fmt.Fprintf(w, "usage: astralvessel %s\n\n%s\n", c.usage, c.summary)
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", c.help)
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// usageError prints a subcommand's usage line on stderr (for exit code 2).
func usageError(name string, stderr io.Writer) {
	fmt.Fprintf(stderr, "usage: astralvessel %s\n(astralvessel %s --help for more)\n", commands[name].usage, name)
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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/contextcompiler/ctxc/internal/yamlkeys"
	"io"
	"runtime"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// version (the VERSION file's release) and commit are set at build time:
// -ldflags "-X main.version=0.1.0 -X main.commit=7a22a11". The server reports
// version (server.Config.Version).
var version, commit = "dev", ""

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int
}

func commands() []command {
	return []command{
		{"serve", "serve the gRPC API until SIGTERM or SIGINT", runServe},
		{"compile", "run a profile on a JSON state offline and print the CompileResponse", runCompile},
		{"eval", "replay recorded sessions through profiles and windows and measure the compiled contexts", runEval},
		{"profiles", "list the profiles (built-in and from --config)", runProfiles},
		{"wrap", "run an agent CLI (claude, codex, gemini, qwen, opencode, pi) through a ctxc proxy of its own", runWrap},
		{"health", "probe a running server's grpc.health.v1; exit 0 when SERVING", runHealth},
		{"version", "print the version", runVersion},
	}
}

// run is the whole program; main only supplies the process's context,
// arguments, streams and environment.
func run(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	if len(args) == 0 {
		usage(io.err)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, io, lookupEnv)
		}
		usage(io.out)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], io, lookupEnv)
		}
	}
	fmt.Fprintf(io.err, "ctxc: unknown command %q\n", args[0])
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if near := yamlkeys.Closest(args[0], names); near != "" {
		fmt.Fprintf(io.err, "Did you mean %q?\n", near)
	}
	fmt.Fprintln(io.err)
	usage(io.err)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "ctxc compiles LLM agent context: it turns an agent state into the messages to send to a model.\n\nUsage:\n  ctxc <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun `ctxc <command> --help` for a command's flags.\n")
}

// newFlagSet makes a subcommand's flag set whose --help prints synopsis,
// description and flags.
func newFlagSet(io stdio, name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet("ctxc "+name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage:\n  ctxc %s %s\n\n%s\n\nFlags:\n", name, synopsis, description)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; --help prints to stdout and ends the command with
// exit 0. A mistake is reported in one line, with the closest flag when the
// flag is unknown, and a pointer to --help (the whole usage would bury it).
func parseFlags(fs *flag.FlagSet, io stdio, args []string) (exit int, done bool) {
	// The flag package's own report (error, then the whole usage) is dropped.
	fs.SetOutput(new(strings.Builder))
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--h" || a == "-help" || a == "--help" {
			fs.SetOutput(io.out)
			break
		}
	}
	err := fs.Parse(args)
	if err == nil {
		return 0, false
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK, true
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); !ok {
		fmt.Fprintf(io.err, "%s: %v\n", fs.Name(), err)
	} else {
		fmt.Fprintf(io.err, "%s: unknown flag --%s\n", fs.Name(), name)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near := yamlkeys.Closest(name, names); near != "" {
			fmt.Fprintf(io.err, "Did you mean --%s?\n", near)
		}
	}
	fmt.Fprintf(io.err, "Run `%s --help` for its flags.\n", fs.Name())
	return exitUsage, true
}

// parseFlagsAndArgs is parseFlags for a command whose arguments are files:
// its flags may come after them too (`ctxc compile FILE --profile X`), as
// people write them; after "--" every argument is a file. The flag package
// alone stops at the first argument that is not a flag.
func parseFlagsAndArgs(fs *flag.FlagSet, io stdio, args []string) (exit int, done bool) {
	var files []string
	for rest := args; ; {
		if exit, done := parseFlags(fs, io, rest); done {
			return exit, done
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if parsed := len(rest) - len(left); parsed > 0 && rest[parsed-1] == "--" {
			files = append(files, left...)
			break
		}
		files, rest = append(files, left[0]), left[1:]
	}
	// fs.Args() is then the files, the flags as parsed.
	if err := fs.Parse(append([]string{"--"}, files...)); err != nil {
		fmt.Fprintf(io.err, "%s: %v\n", fs.Name(), err)
		return exitUsage, true
	}
	return 0, false
}

func runVersion(_ context.Context, args []string, io stdio, _ func(string) (string, bool)) int {
	fs := newFlagSet(io, "version", "", "Print the version of this build.")
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	built := ""
	if commit != "" {
		built = " (commit " + commit + ")"
	}
	fmt.Fprintf(io.out, "ctxc %s%s %s %s/%s\n", version, built, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

// printJSON prints a message as indented protojson with stable white space
// (protojson varies its spacing on purpose; json.Indent normalizes it).
func printJSON(w io.Writer, m proto.Message) error {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// printProblems prints a joined error one problem per line.
func printProblems(w io.Writer, what string, err error) {
	fmt.Fprintf(w, "ctxc: %s:\n", what)
	for _, line := range problemLines(err) {
		fmt.Fprintf(w, "  - %s\n", line)
	}
}

// problemLines lists the problems of a tree of joined and wrapped errors, each
// with the whole path of its wrappers ("profiles: profiles[0] (mine):
// stages[1] ..."): a wrapper's prefix goes on every problem it holds, where
// errors.Join alone would print it only before the first.
func problemLines(err error) []string {
	msg := err.Error()
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		children := e.Unwrap()
		texts := make([]string, len(children))
		for i, c := range children {
			texts[i] = c.Error()
		}
		// Only an errors.Join lists its children; fmt.Errorf with several %w
		// reads as one problem.
		if msg == strings.Join(texts, "\n") {
			var lines []string
			for _, c := range children {
				lines = append(lines, problemLines(c)...)
			}
			return lines
		}
	case interface{ Unwrap() error }:
		if inner := e.Unwrap(); inner != nil {
			if prefix, ok := strings.CutSuffix(msg, inner.Error()); ok {
				lines := problemLines(inner)
				for i := range lines {
					lines[i] = prefix + lines[i]
				}
				return lines
			}
		}
	}
	return strings.Split(msg, "\n")
}

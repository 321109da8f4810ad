package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/eval"
	"github.com/contextcompiler/ctxc/internal/eval/realistic"
	"github.com/contextcompiler/ctxc/internal/eval/synth"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/server"
)

// evalMaxMessageBytes is the gRPC message limit of --addr calls: a long
// session's state travels in every request.
const evalMaxMessageBytes = 256 << 20

func runEval(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "eval", "[flags] FILE...\n  ctxc eval --generate SEED [--turns N] > session.jsonl",
		"Replay recorded sessions through profiles and windows, turn by turn and statelessly as a\n"+
			"runtime does (Route each input, Compile after each user turn), and print per profile and\n"+
			"window: structural validity, facts kept, window used, prompt-cache prefix against the\n"+
			"append-only bound, tokens billed at full price, and Compile latency.\n\n"+
			"FILE (or - for standard input) is a session in JSONL: a header line {\"session\": {...}}\n"+
			"with id, model, system_prompt, tools and the facts to keep, then one line per input,\n"+
			"{\"route\": <ctxc.v1.RouteRequest without state>} or {\"state\": <ctxc.v1.AgentState>};\n"+
			"or a Claude Code session transcript, a Codex CLI rollout, a Gemini CLI chat file, or a\n"+
			"list of OpenAI Chat Completions or Anthropic Messages request bodies, one per line\n"+
			"(--format).\n"+
			"docs/measuring.md (\"Measuring long sessions\") and the eval package documentation define the\n"+
			"format and every figure. Several files are measured together.\n\n"+
			"The service runs in this process, built from --config like `ctxc serve`, unless --addr\n"+
			"names a running server. --generate writes a synthetic 40-turn coding-agent session with\n"+
			"planted facts instead (deterministic per seed); with --recorded its tool outputs are real\n"+
			"ones recorded from real tools and its wording people's own (eval/corpus).\n\n"+
			"--sweep measures every session at every window of --windows (by default 64000 down to\n"+
			"4000) and checks, per session and profile, that the service degrades by steps: from\n"+
			"each window to the next smaller one facts kept rise by at most 0.02 and fall by at most\n"+
			"0.15, and no compile is refused where what it must keep (system prompt, tools, first\n"+
			"task, pinned messages, newest turn) fits the usable window. It prints one row per\n"+
			"profile and window, the floors and every violation (exit status 0 either way).")
	profiles := fs.String("profiles", "", "comma-separated profiles to measure (default: every profile the service offers)")
	windows := fs.String("windows", "", "comma-separated windows in tokens (CompileOptions.max_context_token_count); default 16000,8000, with --sweep "+joinWindows(eval.DefaultSweepWindows))
	addr := fs.String("addr", "", "measure a running server at host:port or unix:///path instead of an in-process one")
	routeProfile := fs.String("route-profile", "", "route with this profile instead of the measured one")
	everyStep := fs.Bool("every-step", false, "also compile after every agent step, not only after each user turn")
	asJSON := fs.Bool("json", false, "print the result as JSON (rows and every compile)")
	verbose := fs.Bool("verbose", false, "also print every compile of every session and the violations found (with --sweep: each session's figures at each window)")
	sweep := fs.Bool("sweep", false, "measure every session from the largest window of --windows down to the smallest and check that facts kept degrade by steps and that no compile is refused above the floor")
	generate := fs.String("generate", "", "write a generated session for this seed (an unsigned integer) to standard output and exit")
	turns := fs.Int("turns", 40, "user turns of a --generate session")
	recorded := fs.Bool("recorded", false, "with --generate: build the session from recorded real tool outputs and people's own wording (eval/corpus) instead of synthetic ones")
	formatName := fs.String("format", "auto", "the format of every FILE: auto (detected from its first lines) or one of "+eval.FormatNames())
	factsFile := fs.String("facts", "", "measure the facts this JSON file lists ({\"facts\": [{\"id\", \"kind\", \"text\", \"turn\"}]}, as a session header's) instead of those found in the one session FILE")
	cf := registerConfigFlags(fs, false)
	if code, done := parseFlagsAndArgs(fs, io, args); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(io.err, "ctxc eval: "+format+"\n", a...)
		return exitError
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(io.err, "ctxc eval: "+format+"\n", a...)
		fs.Usage()
		return exitUsage
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var wins []uint32
	switch {
	case given["windows"]:
		var err error
		if wins, err = parseWindows(*windows); err != nil {
			return usageErr("--windows: %v", err)
		}
	case *sweep:
		wins = eval.DefaultSweepWindows
	default:
		wins = []uint32{16_000, 8_000}
	}
	format, err := eval.ParseFormat(*formatName)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	var seed uint64
	if *generate != "" {
		if seed, err = strconv.ParseUint(*generate, 10, 64); err != nil {
			return usageErr("--generate: %q is not an unsigned integer seed", *generate)
		}
		if fs.NArg() != 0 {
			return usageErr("--generate writes a session; it takes no FILE")
		}
	} else if fs.NArg() == 0 {
		return usageErr("give at least one session FILE (or - for standard input)")
	}
	if given["turns"] && *generate == "" {
		return usageErr("--turns goes with --generate")
	}
	if *recorded && *generate == "" {
		return usageErr("--recorded goes with --generate")
	}
	if *sweep && *generate != "" {
		return usageErr("--sweep measures sessions; it does not go with --generate")
	}
	if *turns < 1 {
		return usageErr("--turns: %d must be at least 1", *turns)
	}
	if *factsFile != "" && (*generate != "" || fs.NArg() != 1) {
		return usageErr("--facts lists the facts of one session: give exactly one FILE")
	}

	svc, where, closeSvc, ok := evalService(fs, cf, lookupEnv, *addr, io)
	if !ok {
		return exitError
	}
	defer closeSvc()

	if *generate != "" {
		return evalGenerate(ctx, svc, seed, *turns, *recorded, io)
	}

	var sessions []*eval.Session
	for _, name := range fs.Args() {
		s, err := loadSession(name, io.in, format)
		if err != nil {
			return fail("%s: %v", name, err)
		}
		if *factsFile != "" {
			if err := useFacts(s, *factsFile); err != nil {
				return fail("--facts %s: %v", *factsFile, err)
			}
		}
		sessions = append(sessions, s)
	}
	names := splitList(*profiles)
	if len(names) == 0 {
		if names, err = eval.Profiles(ctx, svc); err != nil {
			return fail("%v", err)
		}
	}
	if *sweep {
		res, err := eval.Sweep(ctx, svc, sessions, eval.SweepOptions{Profiles: names, Windows: wins, RouteProfile: *routeProfile, EveryStep: *everyStep})
		if err != nil {
			return fail("%v", err)
		}
		if *asJSON {
			err = eval.WriteSweepJSON(io.out, res)
		} else {
			err = eval.WriteSweepMarkdown(io.out, res, *verbose)
		}
		if err != nil {
			return fail("%v", err)
		}
		return exitOK
	}
	res, err := eval.Run(ctx, svc, sessions, eval.Options{Profiles: names, Windows: wins, RouteProfile: *routeProfile, EveryStep: *everyStep})
	if err != nil {
		return fail("%v", err)
	}
	if *asJSON {
		err = eval.WriteJSON(io.out, res)
	} else {
		err = eval.WriteMarkdown(io.out, res, eval.MarkdownOptions{Verbose: *verbose, Where: where})
	}
	if err != nil {
		return fail("%v", err)
	}
	return exitOK
}

// evalService is the service eval measures: a client of the server at addr,
// or one built in this process from the configuration as `ctxc compile`
// builds it. It prints what went wrong itself; ok is false then.
func evalService(fs *flag.FlagSet, cf *configFlags, lookupEnv func(string) (string, bool), addr string, io stdio) (svc eval.Service, where string, closeSvc func(), ok bool) {
	if addr != "" {
		conn, err := grpc.NewClient(service.DialTarget(addr), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(evalMaxMessageBytes), grpc.MaxCallSendMsgSize(evalMaxMessageBytes)))
		if err != nil {
			fmt.Fprintf(io.err, "ctxc eval: %v\n", err)
			return nil, "", nil, false
		}
		return eval.FromClient(ctxcv1.NewContextCompilerServiceClient(conn)), "over gRPC at " + addr, func() { conn.Close() }, true
	}
	cfg, err := cf.load(fs, lookupEnv)
	if err != nil {
		printProblems(io.err, "invalid configuration", err)
		return nil, "", nil, false
	}
	cfg.Logger = cfg.NewLogger(io.err)
	eng, err := server.NewEngine(&cfg)
	if err != nil {
		printProblems(io.err, "cannot build the profiles", err)
		return nil, "", nil, false
	}
	local, err := eng.Service()
	if err != nil {
		eng.Close()
		fmt.Fprintf(io.err, "ctxc eval: %v\n", err)
		return nil, "", nil, false
	}
	return local, "in process", eng.Close, true
}

// evalGenerate writes a generated session, with step usage and sizes
// counted by the service's CountTokens for the session's model.
func evalGenerate(ctx context.Context, svc eval.Service, seed uint64, turns int, recorded bool, io stdio) int {
	count, countErr := serviceCounter(ctx, svc, synth.DefaultOptions(seed).Model)
	var s *eval.Session
	var err error
	if recorded {
		s, err = realistic.Generate(realistic.Options{Seed: seed, Turns: turns, Count: count})
	} else {
		s, err = synth.Generate(synth.Options{Seed: seed, Turns: turns, Count: count})
	}
	if err == nil {
		err = *countErr
	}
	if err == nil {
		err = eval.Write(io.out, s)
	}
	if err != nil {
		fmt.Fprintf(io.err, "ctxc eval: --generate: %v\n", err)
		return exitError
	}
	return exitOK
}

// serviceCounter counts texts with the CountTokens RPC for model; the first
// error is kept in *err (and later texts count 0).
func serviceCounter(ctx context.Context, svc eval.Service, model string) (func(string) int, *error) {
	var firstErr error
	return func(s string) int {
		if firstErr != nil {
			return 0
		}
		resp, err := svc.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: model}, Texts: []string{s}})
		if err != nil {
			firstErr = fmt.Errorf("CountTokens: %w", err)
			return 0
		}
		return int(resp.GetTotalTokenCount())
	}, &firstErr
}

func loadSession(name string, stdin io.Reader, format eval.Format) (*eval.Session, error) {
	r := stdin
	if name == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	s, _, err := eval.LoadAny(r, name, format)
	return s, err
}

// useFacts makes the facts listed in the file at path the ones measured on s.
func useFacts(s *eval.Session, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	facts, err := eval.ReadFacts(f)
	if err != nil {
		return err
	}
	return s.UseFacts(facts, filepath.Base(path))
}

func parseWindows(s string) ([]uint32, error) {
	var out []uint32
	for _, part := range splitList(s) {
		n, err := strconv.ParseUint(strings.ReplaceAll(part, "_", ""), 10, 32)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%q is not a positive token count", part)
		}
		out = append(out, uint32(n))
	}
	if len(out) == 0 {
		return nil, errors.New("at least one window is required")
	}
	return out, nil
}

// joinWindows is windows as --windows takes them.
func joinWindows(windows []uint32) string {
	parts := make([]string, len(windows))
	for i, w := range windows {
		parts[i] = strconv.FormatUint(uint64(w), 10)
	}
	return strings.Join(parts, ",")
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/contextcompiler/ctxc/compiler"
	"github.com/contextcompiler/ctxc/llm"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/pipeline"
	"github.com/contextcompiler/ctxc/server"
	"github.com/contextcompiler/ctxc/summarycache"
	"github.com/contextcompiler/ctxc/tokens"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

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
	fmt.Fprintf(io.err, "ctxc: unknown command %q\n\n", args[0])
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

// parseFlags parses args; --help prints to stdout and ends the command with exit 0.
func parseFlags(fs *flag.FlagSet, io stdio, args []string) (exit int, done bool) {
	// Asked-for help goes to stdout; usage after a mistake goes to stderr.
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--h" || a == "-help" || a == "--help" {
			fs.SetOutput(io.out)
			break
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, true
		}
		return exitUsage, true
	}
	return 0, false
}

func runVersion(_ context.Context, args []string, io stdio, _ func(string) (string, bool)) int {
	fs := newFlagSet(io, "version", "", "Print the version of this build.")
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	fmt.Fprintf(io.out, "ctxc %s %s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

func newLogger(w io.Writer, cfg Config) *slog.Logger {
	level, _ := parseLevel(cfg.LogLevel) // validated with the config
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// engine is what every command that runs profiles needs: the token service
// (tokenizers and model registry) and the catalog of built profiles.
type engine struct {
	tokens  *tokens.Service
	catalog *pipeline.Catalog
	cache   *summarycache.Cache
	// maxMessageBytes is the transport's message limit, which the service
	// also applies to what a request expands to.
	maxMessageBytes int
}

// newEngine loads the tokenizers and builds every profile; every problem of
// every profile is reported at once.
func newEngine(cfg Config, tp trace.TracerProvider) (*engine, error) {
	tok, err := tokens.NewService(tokens.ServiceConfig{CacheEntries: cfg.TokenCacheEntries, Models: cfg.ModelRegistry})
	if err != nil {
		return nil, fmt.Errorf("model_registry: %w", err)
	}
	deps, cache, err := newPolicyDeps(cfg, tp, tok)
	if err != nil {
		return nil, err
	}
	reg, err := components(deps)
	if err != nil {
		cache.Close()
		return nil, err
	}
	cat, err := pipeline.NewCatalog(reg, tok, tp, pipeline.Config{DefaultProfile: cfg.DefaultProfile, Profiles: cfg.Profiles, Source: cfg.Path})
	if err != nil {
		cache.Close()
		return nil, fmt.Errorf("profiles: %w", err)
	}
	return &engine{tokens: tok, catalog: cat, cache: cache, maxMessageBytes: cfg.MaxMessageBytes}, nil
}

// newPolicyDeps builds what the LLM-assisted policies need: the helper model
// clients (none when not configured: the policies then fall back to their
// deterministic forms), the summary cache, and prices from the model registry.
func newPolicyDeps(cfg Config, tp trace.TracerProvider, tok *tokens.Service) (policyDeps, *summarycache.Cache, error) {
	var deps policyDeps
	breakers := llm.NewBreakers() // shared, so models on one endpoint share its breaker
	for _, m := range []struct {
		key  string
		cfg  *llm.Config
		dest *llm.Completer
	}{{"models.planner", cfg.Models.Planner, &deps.planner}, {"models.summarizer", cfg.Models.Summarizer, &deps.summarizer}} {
		if m.cfg == nil {
			continue
		}
		client, err := llm.New(*m.cfg, llm.Options{TracerProvider: tp, Breakers: breakers})
		if err != nil {
			return deps, nil, fmt.Errorf("%s: %w", m.key, err)
		}
		*m.dest = client
	}
	cache, err := summarycache.New(cfg.SummaryCache)
	if err != nil {
		return deps, nil, fmt.Errorf("summary_cache: %w", err)
	}
	deps.cache = cache
	deps.prices = func(model string) (float64, float64, bool) {
		info, _, err := tok.Resolve(policies.ModelSpec{Name: model})
		if err != nil || (info.InputPricePerMTok == 0 && info.OutputPricePerMTok == 0) {
			return 0, 0, false
		}
		return info.InputPricePerMTok, info.OutputPricePerMTok, true
	}
	return deps, cache, nil
}

// close releases what the engine holds open (the Redis connection).
func (e *engine) close() {
	if e.cache != nil {
		e.cache.Close()
	}
}

// service is the gRPC service over the use cases over the engine.
func (e *engine) service(log *slog.Logger) (*server.Service, error) {
	limits := compiler.DefaultLimits()
	limits.MaxMessageBytes = e.maxMessageBytes
	app, err := compiler.New(compiler.Config{Catalog: e.catalog, Counters: e.tokens, Limits: limits, Logger: log})
	if err != nil {
		return nil, err
	}
	return server.New(server.Config{Compiler: app, Logger: log})
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
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "  - %s\n", line)
	}
}

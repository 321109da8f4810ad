package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/contextcompiler/ctxc/server"
)

func runServe(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "serve", "[--config FILE] [flags]",
		"Serve the gRPC API (ctxc.v1.ContextCompilerService, grpc.health.v1, reflection) until SIGTERM\n"+
			"or SIGINT, then stop gracefully: health turns NOT_SERVING while calls are still served for\n"+
			"--drain-delay, then new calls are refused and in-flight calls get --grace-period to finish.\n\n"+
			"On an address other than loopback or a Unix socket it needs TLS (--tls-cert, --tls-key;\n"+
			"--tls-client-ca for mTLS) or bearer tokens (--auth-token-file), or --insecure. Calls are\n"+
			"admitted within --max-concurrent-calls and --max-inflight-bytes, and refused with\n"+
			"RESOURCE_EXHAUSTED and a retry hint beyond them.\n\n"+
			"With --http-listen, the same API is served as HTTP/JSON on its own port: every RPC as\n"+
			"POST /ctxc.v1.ContextCompilerService/<Method> with the request as the JSON body, health\n"+
			"at GET /healthz, and the context inspector page at /ui/ (--http-ui: by default only on a\n"+
			"loopback address; behind the same TLS and tokens as the API). On SIGTERM the HTTP\n"+
			"requests in flight finish first, then the gRPC server stops as above, both within the\n"+
			"one grace period.\n\n"+
			"Settings come from flags, then CTXC_* environment variables, then the YAML file given by\n"+
			"--config (which also holds profiles, model_registry and models), then defaults. Tracing\n"+
			"follows the standard OTEL_* variables and is off when none is set.")
	cf := registerConfigFlags(fs, true)
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "ctxc serve: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	tp, shutdownTracing, tracingErr := newTracerProvider(ctx, lookupEnv, version)
	if tracingErr != nil {
		tp, shutdownTracing = noop.NewTracerProvider(), func(context.Context) error { return nil }
	}
	cfg, err := cf.layers(fs, lookupEnv)
	cfg.Logger, cfg.TracerProvider, cfg.Version = cfg.NewLogger(io.err), tp, version
	if err != nil || tracingErr != nil {
		// Every problem, as Start would list them, but nothing is started;
		// after a config file that cannot be read, nothing is checked.
		if fileErr := (*configFileError)(nil); !errors.As(err, &fileErr) {
			err = errors.Join(err, server.Check(&cfg))
		}
		printProblems(io.err, "invalid configuration", errors.Join(tracingErr, err))
		_ = shutdownTracing(context.Background())
		return exitError
	}
	srv, err := server.Start(ctx, &cfg)
	if cfgErr := (*server.ConfigError)(nil); errors.As(err, &cfgErr) {
		printProblems(io.err, "invalid configuration", err)
		_ = shutdownTracing(context.Background())
		return exitError
	}
	defer flushTraces(shutdownTracing, cfg.Logger)
	if err == nil {
		err = srv.Wait() // until ctx ends (SIGTERM, SIGINT) and the shutdown is over
	}
	if err != nil {
		cfg.Logger.Error("serve failed", "error", err.Error())
		return exitError
	}
	return exitOK
}

// flushTraces sends the spans not yet exported.
func flushTraces(shutdown func(context.Context) error, log *slog.Logger) {
	flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(flushCtx); err != nil {
		log.Warn("flushing traces", "error", err.Error())
	}
}

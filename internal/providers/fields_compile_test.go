package providers_test

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/components"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// realCompiler is the application layer as the proxy's server runs it: the
// built-in profiles over the real token service.
func realCompiler(t *testing.T) *compiler.Service {
	t.Helper()
	tok, err := tokens.NewService(tokens.DefaultServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := components.Registry(components.Deps{Outputs: diagnose.NewCache()})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := pipeline.NewCatalog(reg, tok, noop.NewTracerProvider(), pipeline.Config{})
	if err != nil {
		t.Fatal(err)
	}
	app, err := compiler.New(compiler.Config{Catalog: cat, Counters: tok, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// fieldsModels are the models the proxy reads from each format's body or
// path, with their provider.
var fieldsModels = map[agentstate.RenderFormat]agentstate.ModelSpec{
	agentstate.RenderOpenAI:          {Name: "gpt-4o", Provider: "openai"},
	agentstate.RenderOpenAIResponses: {Name: "gpt-4o", Provider: "openai"},
	agentstate.RenderAnthropic:       {Name: "claude-sonnet-4-5", Provider: "anthropic"},
	agentstate.RenderGemini:          {Name: "gemini-2.5-pro", Provider: "google"},
}

// compileBody compiles a body as the proxy does (render_into_input, the
// default profile, the window capped at window tokens, 0 for the model's):
// what the proxy forwards, and whether the compile compacted.
func compileBody(t *testing.T, app *compiler.Service, format agentstate.RenderFormat, body []byte, window int) ([]byte, *compiler.CompileResult, error) {
	t.Helper()
	opts := agentstate.Options{}
	if window > 0 {
		w := uint32(window)
		opts.MaxContextTokens = &w
	}
	st := &agentstate.State{SchemaVersion: agentstate.CurrentSchemaVersion, Model: fieldsModels[format]}
	res, err := app.Compile(t.Context(), compiler.CompileRequest{Request: compiler.Request{Source: compiler.StateSource{State: st}, Options: opts},
		Input: &compiler.ProviderInput{Format: format, Body: body}, RenderIntoInput: true})
	if err != nil {
		return nil, nil, err
	}
	if res.Rendered == "" {
		return body, res, nil
	}
	return []byte(res.Rendered), res, nil
}

// TestFieldsKeptThroughTheProxyCompile is the property test of issue 45's
// first item, per format: random conversations of every message and part
// type the provider's SDK defines (the fields corpus), compiled as the
// proxy compiles them, once in the model's window (nothing changes: the
// client's bytes go) and once in a random small one (compacted: results
// cut, messages masked, summarized, dropped), keep every object they send
// as the client sent it but for the texts the compile cut (FieldsKept); and
// the check fails when any one field of any object sent is left out.
func TestFieldsKeptThroughTheProxyCompile(t *testing.T) {
	app := realCompiler(t)
	const seeds = 12
	for _, format := range providers.FieldsFormats {
		t.Run(format.String(), func(t *testing.T) {
			samples := providers.LoadFieldsCorpus(t, format)
			compacted, refused, mutated := 0, 0, false
			for seed := range uint64(seeds) {
				body := providers.FieldsBody(format, samples, seed, 10)
				out, res, err := compileBody(t, app, format, body, 0)
				if err != nil {
					t.Fatalf("seed %d, the model's window: %v\n%s", seed, err, body)
				}
				if string(out) != string(body) {
					t.Fatalf("seed %d: a compile within the model's window changed the body", seed)
				}
				used := res.Budget.Used
				rng := rand.New(rand.NewPCG(seed, 7))
				for range 2 {
					// A window of 40% to 90% of what the body takes, beside
					// the answer's reservation (the body's max_tokens).
					window := res.Budget.ReservedOutput + used*(40+rng.IntN(51))/100
					out, res, err := compileBody(t, app, format, body, window)
					var irreducible *agentstate.IrreducibleError
					if errors.As(err, &irreducible) {
						refused++
						continue // what must be kept does not fit: refused, nothing sent
					}
					if err != nil {
						t.Fatalf("seed %d, window %d: %v\n%s", seed, window, err, body)
					}
					if res.Report.Compacted || string(out) != string(body) {
						compacted++
					}
					if err := providers.FieldsKept(format, body, out); err != nil {
						t.Fatalf("seed %d, window %d: %v\nclient's body:\n%s\nforwarded:\n%s", seed, window, err, body, out)
					}
					if !mutated && string(out) != string(body) {
						mutated = true
						muts := providers.FieldsMutations(body, out)
						if len(muts) < 20 {
							t.Fatalf("seed %d: only %d mutations of the forwarded body", seed, len(muts))
						}
						t.Logf("seed %d: %d mutations", seed, len(muts))
						for _, m := range muts {
							if providers.FieldsKept(format, body, m.Body) == nil {
								t.Errorf("seed %d: the forwarded body with %s passes the check", seed, m.What)
							}
						}
					}
				}
			}
			t.Logf("%d of %d compiles in a small window compacted, %d refused (what must be kept does not fit)", compacted, 2*seeds, refused)
			if compacted < seeds {
				t.Errorf("%d of %d compiles in a small window compacted: the property is checked on too few", compacted, 2*seeds)
			}
			if !mutated {
				t.Error("no compacted body to mutate")
			}
		})
	}
}

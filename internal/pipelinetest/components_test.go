package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace/noop"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
	"github.com/contextcompiler/ctxc/internal/components"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
)

// An example policy for an existing stage, written as a contributor would
// write it in its own package (policies/maxtokens: config.go, factory.go and
// the policy): "max_tokens" asks the decide stage for compaction once the
// context uses max_tokens tokens. TestAddingAPolicy registers it with one
// more entry in the factories list, which is all that components.go needs.

// maxTokensConfig is the policy's settings.
type maxTokensConfig struct {
	// MaxTokens is the most tokens the context may use before it is
	// compacted down to that many. Default 100000.
	MaxTokens int `yaml:"max_tokens" json:"max_tokens"`
}

func (c *maxTokensConfig) Validate() error {
	if c.MaxTokens <= 0 {
		return fmt.Errorf("max_tokens must be positive, got %d", c.MaxTokens)
	}
	return nil
}

type maxTokensFactory struct{}

func (maxTokensFactory) Type() string          { return "max_tokens" }
func (maxTokensFactory) Stage() policies.Stage { return policies.StageDecide }
func (maxTokensFactory) CreateDefaultConfig() policies.Config {
	return &maxTokensConfig{MaxTokens: 100_000}
}

func (maxTokensFactory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*maxTokensConfig)
	if !ok {
		return nil, fmt.Errorf("max_tokens: config is %T, want *maxTokensConfig", cfg)
	}
	return maxTokens{limit: c.MaxTokens}, nil
}

type maxTokens struct{ limit int }

func (p maxTokens) Apply(_ context.Context, w *policies.Work) error {
	if w.Budget == nil {
		return errors.New("max_tokens needs a budget policy before it")
	}
	if w.Budget.Used < p.limit {
		return nil
	}
	w.Decision = policies.Decision{Compact: true, Reason: fmt.Sprintf("%d tokens used, max_tokens is %d", w.Budget.Used, p.limit), Target: p.limit}
	return nil
}

const cappedProfile = `
- name: capped
  stages:
    - policy: normalize
    - policy: estimate
    - policy: token_budget
    - policy: max_tokens
      settings: {max_tokens: %d}
    - policy: truncate
    - policy: repair
`

func cappedProfiles(t *testing.T, maxTokens int) []pipeline.ProfileSpec {
	t.Helper()
	var specs []pipeline.ProfileSpec
	if err := yaml.Unmarshal(fmt.Appendf(nil, cappedProfile, maxTokens), &specs); err != nil {
		t.Fatal(err)
	}
	return specs
}

// TestAddingAPolicy: a policy added to an existing stage with one more entry
// in the factories list is known to profiles, validated at start, listed
// with its settings and run by Compile like any built-in one; the pipeline,
// the application layer, the server and the API need no change.
func TestAddingAPolicy(t *testing.T) {
	const capTokens = 1000
	withExample := append(components.Factories(components.Deps{}), maxTokensFactory{}) // the one line
	reg, err := policies.NewRegistry(withExample...)
	if err != nil {
		t.Fatal(err)
	}
	resolver := windowResolver{window: 1_000_000, output: 256} // the window never forces compaction
	if _, err := pipeline.NewCatalog(reg, resolver, noop.NewTracerProvider(), pipeline.Config{Profiles: cappedProfiles(t, 0)}); err == nil ||
		!strings.Contains(err.Error(), "stages[3] (max_tokens): settings: max_tokens must be positive, got 0") {
		t.Errorf("a bad setting: err = %v, want the policy's own Validate message", err)
	}
	without, err := components.Registry(components.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.NewCatalog(without, resolver, noop.NewTracerProvider(), pipeline.Config{Profiles: cappedProfiles(t, capTokens)}); err == nil ||
		!strings.Contains(err.Error(), `unknown policy "max_tokens"`) {
		t.Errorf("without its factory: err = %v, want unknown policy", err)
	}

	cat, err := pipeline.NewCatalog(reg, resolver, noop.NewTracerProvider(), pipeline.Config{Profiles: cappedProfiles(t, capTokens)})
	if err != nil {
		t.Fatal(err)
	}
	app, err := compiler.New(compiler.Config{Catalog: cat, Counters: compilertest.Counters{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	for _, p := range app.Profiles() {
		if p.Name == "capped" {
			for _, s := range p.Stages {
				stages = append(stages, s.Stage+"/"+s.Policy+" "+s.SettingsJSON)
			}
		}
	}
	if len(stages) != 6 || stages[3] != fmt.Sprintf(`decide/max_tokens {"max_tokens":%d}`, capTokens) {
		t.Errorf("ListProfiles shows capped as %q", stages)
	}

	opts := statetest.DefaultOptions()
	opts.Turns = 12
	st := statetest.Generate(rand.New(rand.NewSource(7)), opts)
	st.Context.SystemPrompt = ""
	if n := fullSize(st); n <= 2*capTokens {
		t.Fatalf("the generated log costs %d tokens, too few to be capped at %d", n, capTokens)
	}
	res, err := app.Compile(t.Context(), compiler.CompileRequest{Request: compiler.Request{Profile: "capped", Source: compiler.StateSource{State: st}}})
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, s := range res.Report.Stages {
		ran = append(ran, fmt.Sprintf("%s/%s skipped=%v", s.Stage, s.Policy, s.Skipped))
	}
	want := []string{"normalize/normalize skipped=false", "estimate/estimate skipped=false", "budget/token_budget skipped=false",
		"decide/max_tokens skipped=false", "compact/truncate skipped=false", "compact/repair skipped=false",
		// The budget is measured again, through its step, on what is sent.
		"budget/token_budget skipped=false"}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("stages run (-want +got):\n%s", diff)
	}
	// Compaction aims at max_tokens and keeps what it must (the first task,
	// the latest turn, pins, unresolved failures, the running execution).
	full := fullSize(st)
	if !res.Report.Compacted || res.Budget.Used >= full || !slices.ContainsFunc(res.Report.Warnings, func(w string) bool {
		return strings.Contains(w, "over the compaction target of 1,000")
	}) {
		t.Errorf("compacted %v, %d of %d tokens used, warnings %q; want compaction towards max_tokens", res.Report.Compacted, res.Budget.Used, full, res.Report.Warnings)
	}
}

// TestReadmeShowsAddingAPolicy keeps the README's contributor section true:
// its components.go excerpt is the list as it is plus the one new line, and
// its profile builds with the example policy registered.
func TestReadmeShowsAddingAPolicy(t *testing.T) {
	readme, err := docs()
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### Adding a policy\n")
	if !ok {
		t.Fatal("README.md has no \"### Adding a policy\" section")
	}
	block := func(lang string) []string {
		_, rest, ok := strings.Cut(section, "\n```"+lang+"\n")
		body, _, closed := strings.Cut(rest, "\n```\n")
		if !ok || !closed {
			t.Fatalf("the section has no ```%s block", lang)
		}
		return strings.Split(body, "\n")
	}

	excerpt := block("go")
	added := excerpt[len(excerpt)-1]
	if strings.TrimSpace(added) != "maxtokens.NewFactory()," {
		t.Errorf("the excerpt ends with %q, want the example's factory", added)
	}
	source, err := os.ReadFile("../../internal/components/components.go")
	if err != nil {
		t.Fatal(err)
	}
	if existing := strings.Join(excerpt[:len(excerpt)-1], "\n") + "\n"; !strings.Contains(string(source), existing) {
		t.Errorf("internal/components/components.go does not hold the README's excerpt:\n%s", existing)
	}

	var cfg struct {
		Profiles []pipeline.ProfileSpec `yaml:"profiles"`
	}
	if err := yaml.Unmarshal([]byte(strings.Join(block("yaml"), "\n")), &cfg); err != nil {
		t.Fatal(err)
	}
	reg, err := policies.NewRegistry(append(components.Factories(components.Deps{}), maxTokensFactory{})...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.NewCatalog(reg, windowResolver{window: 200_000, output: 4096}, noop.NewTracerProvider(), pipeline.Config{Profiles: cfg.Profiles}); err != nil {
		t.Errorf("the README's profile does not build: %v", err)
	}
}

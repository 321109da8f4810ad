// Package compilertest holds fakes of the application layer's dependencies
// for tests of package compiler and of the adapters above it: a Catalog that
// keeps every message and records the requests it ran, and token counters
// that count a token per four bytes. They are deterministic and cheap; tests
// that need the real pipeline build a pipeline.Catalog instead.
package compilertest

import (
	"context"
	"sync"

	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Counter counts one token per 4 bytes of text, plus 3 per message; its
// counts are exact.
type Counter struct{ Encoding string }

// CountMessage counts a message.
func (c Counter) CountMessage(m *agentstate.Message) (int, agentstate.Provenance) {
	return 3 + len(m.Text())/4, agentstate.ProvenanceExact
}

// CountText counts a bare text.
func (c Counter) CountText(s string) int { return len(s) / 4 }

// CountPreamble counts the system prompt and 10 tokens per tool.
func (c Counter) CountPreamble(ctx *agentstate.Context) (int, int) {
	return len(ctx.SystemPrompt) / 4, len(ctx.Tools) * 10
}

// Name is the counter's encoding.
func (c Counter) Name() string { return c.Encoding }

// Counters knows model gpt-4o (window 128,000, encoding o200k_base) and
// encoding cl100k_base.
type Counters struct{}

// Resolve resolves gpt-4o; any other model is a *agentstate.UnknownModelError.
func (Counters) Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error) {
	if spec.Name != "gpt-4o" {
		return agentstate.ModelInfo{}, nil, &agentstate.UnknownModelError{Field: "state.model.name", Model: spec.Name}
	}
	return agentstate.ModelInfo{Name: spec.Name, ContextWindow: 128000}, Counter{"o200k_base"}, nil
}

// ProviderOf knows gpt-4o (openai) and claude-sonnet-4-5 (anthropic).
func (Counters) ProviderOf(model string) string {
	return map[string]string{"gpt-4o": "openai", "claude-sonnet-4-5": "anthropic"}[model]
}

// CounterForEncoding finds cl100k_base; any other encoding is an
// InvalidArgumentError with reason ReasonUnknownEncoding.
func (Counters) CounterForEncoding(name string) (agentstate.TokenCounter, error) {
	if name != "cl100k_base" {
		return nil, &agentstate.InvalidArgumentError{Reason: agentstate.ReasonUnknownEncoding,
			Violations: []agentstate.FieldViolation{{Field: "encoding", Description: "unknown encoding " + name}}}
	}
	return Counter{name}, nil
}

// Catalog keeps every message, reports them kept, and records requests. It
// knows profiles "pragmatic" (the default) and "custom"; a run of profile
// "panic" panics, and one of profile "block" signals Started and waits for
// Release (or the end of its context).
type Catalog struct {
	// Started receives a value when a run of profile "block" starts.
	Started chan struct{}
	// Release, when closed, lets runs of profile "block" finish.
	Release chan struct{}
	// CompactOnExecutionEnd sets the profiles' CompactOnExecutionEnd.
	CompactOnExecutionEnd bool
	// CompactErr, when set, is what Compact returns.
	CompactErr error

	mu  sync.Mutex
	got []pipeline.Request
}

// NewCatalog returns a Catalog ready for use.
func NewCatalog() *Catalog {
	return &Catalog{Started: make(chan struct{}, 16), Release: make(chan struct{})}
}

// Run keeps every message of req.State's log and counts them with Counter.
func (f *Catalog) Run(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	f.mu.Lock()
	f.got = append(f.got, req)
	f.mu.Unlock()
	switch req.Profile {
	case "", "pragmatic", "custom":
	case "panic":
		panic("policy bug with secret detail")
	case "block":
		f.Started <- struct{}{}
		select {
		case <-f.Release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	default:
		return nil, &agentstate.UnknownProfileError{Name: req.Profile, Known: []string{"custom", "pragmatic"}}
	}
	w, _ := policies.NewWork(policies.Input{State: req.State, Options: req.Options})
	report := policies.Report{Profile: "pragmatic", FirstChangedIndex: 1, VerbatimPrefix: 1}
	for i := range w.Entries {
		n, p := Counter{}.CountMessage(&w.Entries[i].Message)
		w.Entries[i].Tokens, w.Entries[i].Provenance = n, p
		report.Messages = append(report.Messages, policies.MessageReport{MessageID: w.Entries[i].SourceID, Disposition: policies.DispositionKept, Tokens: n, Provenance: p})
	}
	report.Stages = []policies.StageReport{{Stage: "normalize", Policy: "normalize", MessagesIn: len(w.Entries), MessagesOut: len(w.Entries)}}
	w.Budget = &agentstate.Budget{ContextWindow: 128000, Used: w.MessageTokens(), ReservedOutput: 4096, Remaining: 128000 - 4096 - w.MessageTokens(),
		Provenance: agentstate.ProvenanceExact, Counter: "o200k_base", Breakdown: agentstate.Breakdown{Conversation: w.MessageTokens()}}
	return &pipeline.Result{Work: w, Report: report, BudgetBefore: w.Budget}, nil
}

// SummaryID is the id of the summary Compact appends.
const SummaryID = "ctxc-summary-1"

// Compact runs req and appends a summary covering message "u1" to the log.
func (f *Catalog) Compact(ctx context.Context, req pipeline.Request) (*pipeline.CompactResult, error) {
	if f.CompactErr != nil {
		f.mu.Lock()
		f.got = append(f.got, req)
		f.mu.Unlock()
		return nil, f.CompactErr
	}
	res, err := f.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	st := *req.State
	st.Context.Messages = append(append([]agentstate.Message(nil), st.Context.Messages...), agentstate.Message{
		ID: SummaryID, Role: agentstate.RoleUser, Kind: agentstate.KindSummary, CoversMessageIDs: []string{"u1"},
		Parts: []agentstate.Part{agentstate.TextPart("summary")},
	})
	return &pipeline.CompactResult{State: &st, Before: res.Work.Budget, After: res.Work.Budget, Report: res.Report}, nil
}

// Profiles describes "custom" and "pragmatic".
func (f *Catalog) Profiles() []pipeline.ProfileInfo {
	return []pipeline.ProfileInfo{
		{Name: "custom", Description: "Mine.", Source: "examples/profiles.yaml", CompactOnExecutionEnd: f.CompactOnExecutionEnd,
			Stages: []pipeline.StepInfo{{Stage: "normalize", Policy: "normalize", SettingsJSON: "{}"}}},
		{Name: "pragmatic", Description: "Default.", Default: true, Source: "builtin", CompactOnExecutionEnd: f.CompactOnExecutionEnd, Stages: []pipeline.StepInfo{
			{Stage: "normalize", Policy: "normalize", SettingsJSON: "{}"},
			{Stage: "estimate", Policy: "estimate", SettingsJSON: `{"cache":true}`},
		}},
	}
}

// Profile describes one profile; "" is "pragmatic".
func (f *Catalog) Profile(name string) (pipeline.ProfileInfo, error) {
	if name == "" {
		name = "pragmatic"
	}
	for _, p := range f.Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return pipeline.ProfileInfo{}, &agentstate.UnknownProfileError{Name: name, Known: []string{"custom", "pragmatic"}}
}

// Requests returns the requests run so far, in order.
func (f *Catalog) Requests() []pipeline.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pipeline.Request(nil), f.got...)
}

package budget

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// countOf is a fixed, test-chosen count per message id: the budget must only
// add what the estimate stage recorded.
var countOf = map[string]int{"u1": 100, "a1": 50, "t1": 300, "u2": 40, "a2": 60, "u3": 25, "s1": 70, "p1": 15}

func msg(id string, role agentstate.Role, usage *agentstate.Usage) agentstate.Message {
	m := agentstate.Message{ID: id, Role: role, Usage: usage, Parts: []agentstate.Part{agentstate.TextPart(id)}}
	if role == agentstate.RoleTool {
		m.Parts = []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "c1", Content: "ok"}}}
	}
	return m
}

// work is the Work the budget stage gets for log, counted with prov, for a
// model of a 10,000-token window unless set changes it.
func work(log []agentstate.Message, prov agentstate.Provenance, set ...func(*policies.Input)) *policies.Work {
	in := policies.Input{
		State: &agentstate.State{Context: agentstate.Context{Messages: log}},
		Model: agentstate.ModelInfo{ContextWindow: 10_000, MaxOutputTokens: 1_000},
	}
	for _, f := range set {
		f(&in)
	}
	w, _ := policies.NewWork(in)
	w.SystemTokens, w.ToolTokens = 20, 30
	for i := range w.Entries {
		w.Entries[i].Tokens, w.Entries[i].Provenance, w.Entries[i].Counted = countOf[w.Entries[i].SourceID], prov, true
	}
	return w
}

func conversation() []agentstate.Message {
	call := msg("a1", agentstate.RoleAssistant, &agentstate.Usage{InputTokens: 900, CachedInputTokens: 100, OutputTokens: 40})
	call.Parts = append(call.Parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "f"}})
	return []agentstate.Message{
		msg("u1", agentstate.RoleUser, nil),
		call,
		msg("t1", agentstate.RoleTool, nil),
		msg("u2", agentstate.RoleUser, nil),
		msg("a2", agentstate.RoleAssistant, &agentstate.Usage{InputTokens: 1500, CachedInputTokens: 500, OutputTokens: 60}),
		msg("u3", agentstate.RoleUser, nil),
	}
}

func TestAnchoredBudget(t *testing.T) {
	cfg := DefaultConfig()
	tests := []struct {
		name     string
		edit     func(w *policies.Work)
		wantUsed int
		wantProv agentstate.Provenance
	}{
		// a2's usage (1500+500+60) covers everything up to a2; only u3 is added.
		{"anchored on newest usage", func(*policies.Work) {}, 2060 + 25, agentstate.ProvenanceAnchored},
		// u2 edited: a2's prefix differs, a1's is intact.
		{"edit after older anchor", func(w *policies.Work) { w.Touch(3); w.Entries[3].Tokens = 41 }, 1040 + 300 + 41 + 60 + 25, agentstate.ProvenanceAnchored},
		// u1 edited: no anchor's prefix is intact.
		{"edited prefix falls back", func(w *policies.Work) { w.Touch(0); w.Entries[0].Tokens = 90 }, 50 + 90 + 50 + 300 + 40 + 60 + 25, agentstate.ProvenanceExact},
		// A synthesized entry before a1 shifts the view off the log.
		{"inserted entry falls back", func(w *policies.Work) {
			w.Entries = append([]agentstate.Entry{{Message: msg("ctxc-x", agentstate.RoleUser, nil), Tokens: 5, Provenance: agentstate.ProvenanceEstimated}}, w.Entries...)
		}, 50 + 5 + 100 + 50 + 300 + 40 + 60 + 25, agentstate.ProvenanceEstimated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := work(conversation(), agentstate.ProvenanceExact)
			tt.edit(w)
			b := Compute(w, &cfg)
			if b.Used != tt.wantUsed || b.Provenance != tt.wantProv {
				t.Errorf("Used, Provenance = %d, %v; want %d, %v", b.Used, b.Provenance, tt.wantUsed, tt.wantProv)
			}
		})
	}
}

func TestComputeFields(t *testing.T) {
	log := []agentstate.Message{msg("u1", agentstate.RoleUser, nil), msg("s1", agentstate.RoleUser, nil), msg("p1", agentstate.RoleUser, nil), msg("t1", agentstate.RoleTool, nil)}
	log[1].Kind = agentstate.KindSummary
	log[2].Pinned = true
	ratio, reserve, maxCtx := 0.5, uint32(3000), uint32(8000)
	tests := []struct {
		name string
		cfg  Config
		opts agentstate.Options
		prov agentstate.Provenance
		want agentstate.Budget
	}{
		{"defaults", DefaultConfig(), agentstate.Options{}, agentstate.ProvenanceEstimated, agentstate.Budget{
			ContextWindow: 10_000, Used: 535, ReservedOutput: 1000, ReservedSystem: 50, SoftThreshold: 7200, Remaining: 8465,
			Provenance: agentstate.ProvenanceEstimated,
			Breakdown:  agentstate.Breakdown{SystemPrompt: 20, Tools: 30, Pinned: 15, Summaries: 70, Conversation: 100, ToolTrace: 300},
		}},
		// Reserve 3000 is capped at 0.25 x 8000; soft threshold 0.5 x 6000; headroom 8000 asks to compact.
		{"options and caps", Config{SoftThresholdRatio: 0.8, MaxReservedOutputRatio: 0.25, MinHeadroomTokens: 8000},
			agentstate.Options{SoftThresholdRatio: &ratio, ReservedOutputTokens: &reserve, MaxContextTokens: &maxCtx}, agentstate.ProvenanceExact, agentstate.Budget{
				ContextWindow: 8000, Used: 535, ReservedOutput: 2000, ReservedSystem: 50, SoftThreshold: 3000, Remaining: 5465, MinHeadroom: 8000, ShouldCompact: true,
				Provenance: agentstate.ProvenanceExact,
				Breakdown:  agentstate.Breakdown{SystemPrompt: 20, Tools: 30, Pinned: 15, Summaries: 70, Conversation: 100, ToolTrace: 300},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := work(log, tt.prov, func(in *policies.Input) { in.Options = tt.opts })
			if diff := cmp.Diff(tt.want, Compute(w, &tt.cfg)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// estimated is the conversation counted by ctxc alone (no provider usage).
func estimated(set ...func(*policies.Input)) *policies.Work {
	w := work(conversation(), agentstate.ProvenanceEstimated, set...)
	for i := range w.Entries {
		w.Entries[i].Message.Usage = nil
	}
	return w
}

// window sets the model's window and output limit.
func window(tokens, maxOutput int) func(*policies.Input) {
	return func(in *policies.Input) { in.Model.ContextWindow, in.Model.MaxOutputTokens = tokens, maxOutput }
}

func TestOverThresholdAndNeverNegative(t *testing.T) {
	w := estimated(window(1000, 1_000)) // reserve capped at 250, usable 750, soft 600
	cfg := DefaultConfig()
	b := Compute(w, &cfg)
	want := agentstate.Budget{ContextWindow: 1000, Used: 625, ReservedOutput: 250, ReservedSystem: 50, SoftThreshold: 600, Remaining: 125, OverSoftThreshold: true, ShouldCompact: true, Provenance: agentstate.ProvenanceEstimated, Breakdown: b.Breakdown}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	w = estimated(window(500, 1_000))
	if b := Compute(w, &cfg); b.Remaining != 0 || !b.ShouldCompact {
		t.Errorf("over-full: Remaining %d ShouldCompact %v", b.Remaining, b.ShouldCompact)
	}
}

// TestSoftThresholdBoundary: the soft threshold is reached at Used ==
// SoftThreshold (the proto's over_soft_threshold is >=), one token below is
// not; the minimum headroom asks at one token less than it remaining.
func TestSoftThresholdBoundary(t *testing.T) {
	used := Compute(estimated(), &Config{SoftThresholdRatio: 1, MaxReservedOutputRatio: 0.25}).Used
	tests := []struct {
		name          string
		window        int
		headroom      int
		over, compact bool
	}{
		{"at the threshold", used, 0, true, true},
		{"one token under", used + 1, 0, false, false},
		{"headroom one short", used + 10, 11, false, true},
		{"headroom met", used + 10, 10, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := estimated(window(tt.window, 0))
			b := Compute(w, &Config{SoftThresholdRatio: 1, MaxReservedOutputRatio: 0.25, MinHeadroomTokens: tt.headroom})
			if b.OverSoftThreshold != tt.over || b.ShouldCompact != tt.compact {
				t.Errorf("used %d of soft threshold %d, %d remaining: over %v should_compact %v, want %v %v",
					b.Used, b.SoftThreshold, b.Remaining, b.OverSoftThreshold, b.ShouldCompact, tt.over, tt.compact)
			}
		})
	}
}

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type() != "token_budget" || f.Stage() != policies.StageBudget {
		t.Fatalf("factory = %s/%s", f.Type(), f.Stage())
	}
	p, err := f.Create(f.CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := work(conversation(), agentstate.ProvenanceExact)
	if err := p.Apply(t.Context(), w); err != nil || w.Budget == nil || w.Budget.Used != 2085 {
		t.Errorf("Apply: err %v budget %+v", err, w.Budget)
	}
	bad := &Config{SoftThresholdRatio: 0, MaxReservedOutputRatio: 1.5, MinHeadroomTokens: -1}
	err = bad.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	if _, err := f.Create(bad); err == nil {
		t.Error("Create accepted a bad config")
	}
}

// TestReservedOutputClampWarned: a reservation over the ratio of the window
// is clamped and the clamp is a warning in the report, once however often
// the runner measures again; a reservation within it, or none, warns nothing.
func TestReservedOutputClampWarned(t *testing.T) {
	huge, fits := uint32(1<<32-1), uint32(2_000)
	tests := []struct {
		name         string
		reserve      *uint32
		wantReserved int
		wantWarnings []string
	}{
		{"2^32-1 clamped", &huge, 2_500, []string{"reserved_output_token_count 4294967295 is more than max_reserved_output_ratio 0.25 of the 10000-token window: 2500 tokens reserved for output"}},
		{"within the ratio", &fits, 2_000, nil},
		{"none: the model's", nil, 1_000, nil},
	}
	f := NewFactory()
	p, err := f.Create(f.CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := work(conversation(), agentstate.ProvenanceExact, func(in *policies.Input) { in.Options.ReservedOutputTokens = tt.reserve })
			for range 3 {
				if err := p.Apply(t.Context(), w); err != nil {
					t.Fatal(err)
				}
			}
			if w.Budget.ReservedOutput != tt.wantReserved {
				t.Errorf("ReservedOutput = %d, want %d", w.Budget.ReservedOutput, tt.wantReserved)
			}
			if diff := cmp.Diff(tt.wantWarnings, w.Report().Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

package metrics

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/contextcompiler/ctxc/internal/llm"
)

// TestReasonClass classes the reasons the runner and the policies write, as
// they write them: the helper-model client's own errors, formatted by the
// client, and the policies' fallback sentences.
func TestReasonClass(t *testing.T) {
	callErr := func(kind string) error {
		return &llm.Error{Kind: kind, Model: "gpt-4o-mini", Attempts: 2, Err: errors.New("upstream said no")}
	}
	tests := []struct {
		reason, want string
	}{
		{"did not shrink the context (1200 -> 1200 tokens); reverted", ReasonNotShrunk},
		{"llm_summarize: no summarizer model configured; used the deterministic summary", ReasonModelNotConfigured},
		{"llm_plan: planning (large artifact) failed: no planner model configured; used the deterministic plan", ReasonModelNotConfigured},
		{"llm_summarize: summarizer window of 512 tokens is too small for a 800-token summary; used the deterministic summary", ReasonPromptTooLarge},
		{"llm_plan: planning (near the limit) failed: no artifact fits max_prompt_chars 4000; used the deterministic plan", ReasonPromptTooLarge},
		{"llm_summarize: the model returned an empty summary; used the deterministic summary", ReasonModelOutputRejected},
		{"llm_summarize: rejected a 900-token summary: over its budget of 800 tokens (it must be smaller than what it replaces); used the deterministic summary", ReasonModelOutputRejected},
		{"llm_plan: planning (large artifact) failed: invalid plan: artifacts[0]: unknown strategy \"x\"; used the deterministic plan", ReasonModelOutputRejected},
		{"llm_plan: planning (large artifact) failed: plan is not JSON: EOF; used the deterministic plan", ReasonModelOutputRejected},
		{"summarizer failed (boom); used the deterministic summary", ReasonOther},
		{"", ReasonOther},
		// The first failure named decides.
		{fmt.Sprintf("llm_plan: planning (large artifact) failed: %v; used the deterministic plan; summary of doc failed: no summarizer model configured; extracted instead",
			callErr(llm.KindTimeout)), "model_timeout"},
	}
	for _, kind := range llmKinds {
		tests = append(tests,
			struct{ reason, want string }{fmt.Sprintf("llm_summarize: %v; used the deterministic summary", callErr(kind)), "model_" + kind},
			struct{ reason, want string }{fmt.Sprintf("summarizer failed (%v); used the deterministic summary", callErr(kind)), "model_" + kind})
	}
	classes := ReasonClasses()
	for _, tt := range tests {
		got := ReasonClass(tt.reason)
		if got != tt.want {
			t.Errorf("ReasonClass(%q) = %q, want %q", tt.reason, got, tt.want)
		}
		if !slices.Contains(classes, got) {
			t.Errorf("ReasonClass(%q) = %q, which ReasonClasses does not list", tt.reason, got)
		}
	}
}

// FuzzReasonClass: whatever the text, the class is one of the listed ones
// (the label stays bounded).
func FuzzReasonClass(f *testing.F) {
	f.Add("gpt-4o-mini timeout after 2 attempt(s)")
	f.Add("did not shrink the context")
	f.Fuzz(func(t *testing.T, reason string) {
		if got := ReasonClass(reason); !slices.Contains(ReasonClasses(), got) {
			t.Fatalf("ReasonClass(%q) = %q, not a listed class", reason, got)
		}
	})
}

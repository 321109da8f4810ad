package compaction

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// floorSpan is a task under three constraints and two decisions, then many
// failed commands, each a different one, none seen fixed: all open.
func floorSpan(failures int) []agentstate.Message {
	span := []agentstate.Message{{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(
		"The tests of the billing service fail since the rounding change.\n\nNever edit anything under vendor/, the partners vendor their own copies of it.\n\n" +
			"Do not change any function signature in package pricing, three other teams call them.\n\n" +
			"The max gRPC message size has to stay at 16 MiB, partners depend on it.")}}}
	span = append(span, step("d1", "We decided to keep the retry budget at 3 attempts for the ledger writer, so that a failing shard cancels the others.", "cat internal/ledger/writer.go", "package ledger\n", false)...)
	span = append(span, step("d2", "We decided to move invoice rounding into pricing.Round rather than change its callers.", "cat pricing/round.go", "package pricing\n", false)...)
	for i := range failures {
		out := fmt.Sprintf("--- FAIL: TestInvoice%d (0.01s)\n    invoice_%d_test.go:%d: got %d cents, want %d cents for the partner order %d\nFAIL\nexit status 1\n", i, i, 40+i, 1200+i, 1500+i, 7000+i)
		span = append(span, step(fmt.Sprintf("f%d", i), "Running the next package's tests.", fmt.Sprintf("go test ./billing/invoice%d/...", i), out, true)...)
	}
	return span
}

// TestSummaryKeepsAFloorForConstraintsBesideOpenErrors: a span of many open
// failures, which are never left out and alone outgrow the budget, keeps
// the user's constraints, whole or shortened to what identifies them, in
// the floor share of its budget (floorShare), and its note counts exactly
// the items it left out.
func TestSummaryKeepsAFloorForConstraintsBesideOpenErrors(t *testing.T) {
	span := floorSpan(14)
	full := summarizeSpan(t, span, math.MaxInt32)
	all := strings.Count(full, "\n- ")
	wantConstraints := summarySection(t, full, secConstraints)
	wantDecisions := summarySection(t, full, secDecisions)
	if len(wantConstraints) != 3 || len(wantDecisions) != 2 {
		t.Fatalf("with room for all, want 3 constraints and 2 decisions:\n%s", full)
	}
	b := newSummaryBuilder(SummaryRequest{})
	fullTokens := b.count(full)
	tests := []struct {
		name   string
		budget int
	}{
		{"three fifths", fullTokens * 3 / 5},
		{"half", fullTokens / 2},
		{"two fifths", fullTokens * 2 / 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := summarizeSpan(t, span, tt.budget)
			open := summarySection(t, text, secOpenErrors)
			if len(open) != 14 {
				t.Fatalf("%d open errors, want all 14:\n%s", len(open), text)
			}
			// Each constraint and decision is there, whole or as its
			// identifying form.
			// Each constraint is there, whole or as its identifying form;
			// the decisions share the floor after them, heaviest first.
			got := summarySection(t, text, secConstraints)
			var want []string
			for i, it := range wantConstraints {
				if i < len(got) && got[i] != it {
					it = identifyingForm(secConstraints, it)
				}
				want = append(want, it)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("constraints at budget %d of %d (-want +got):\n%s\n%s", tt.budget, fullTokens, diff, text)
			}
			written := strings.Count(text, "\n- ")
			leftOut := 0
			if i := strings.Index(text, "\n[... "); i >= 0 && strings.Contains(text, "left out to fit") {
				if _, err := fmt.Sscanf(text[i+len("\n[... "):], "%d", &leftOut); err != nil {
					t.Fatalf("unreadable note: %v\n%s", err, text)
				}
			}
			if diff := cmp.Diff(all, written+leftOut); diff != "" {
				t.Errorf("%d written and %d said left out, want %d in all (-want +got):\n%s\n%s", written, leftOut, all, diff, text)
			}
		})
	}
}

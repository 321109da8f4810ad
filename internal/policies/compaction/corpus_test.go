package compaction

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/agentstate"
	"github.com/contextcompiler/ctxc/internal/eval/corpus"
	"github.com/contextcompiler/ctxc/internal/policies/diagnose"
)

// TestSummaryNamesEveryRecordedFailure is the checked property of a failed
// tool call in a summary: for every failed output of the recorded corpus
// (real tools, real bugs, lines labelled by reading them), a summary of the
// call names the failure by every line that identifies it (a repeat at
// another location by its location in the group), and not by its envelope
// alone.
func TestSummaryNamesEveryRecordedFailure(t *testing.T) {
	cases, err := corpus.All()
	if err != nil {
		t.Logf("malformed cases left out (corpus's own test names them): %v", err)
	}
	failed := 0
	for _, c := range cases {
		if !c.Meta.Failed {
			continue
		}
		failed++
		t.Run(c.ID, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": c.Meta.Command})
			span := []agentstate.Message{
				{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("run it")}},
				{ID: "a1", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "bash", ArgumentsJSON: string(args)}}}},
				{ID: "t1", Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "c1", Name: "bash", Content: c.Output, IsError: c.Meta.ExitCode != 0}}}},
			}
			text, err := DeterministicSummarizer{}.Summarize(context.Background(), SummaryRequest{Span: span, BudgetTokens: math.MaxInt32})
			if err != nil {
				t.Fatal(err)
			}
			got := collapse(text)
			if !strings.Contains(got, "[call c1]") {
				t.Errorf("the failed call is not named by its id:\n%s", text)
			}
			d := diagnose.Read(c.Output)
			for _, want := range c.Meta.Identifying {
				want = stripColours(want)
				// A line longer than the limit is kept elided (head and tail).
				if strings.Contains(got, collapse(want)) || strings.Contains(got, collapse(diagnose.Elide(want, diagnose.DefaultLimits.Runes))) || groupedAt(d, want) {
					continue
				}
				t.Errorf("identifying line not in the summary: %q\n%s", want, text)
			}
		})
	}
	if failed < 100 {
		t.Errorf("%d failed outputs in the corpus, want at least 100", failed)
	}
}

// groupedAt reports whether a line's location is listed as a repeat of a
// grouped finding (the same diagnostic at another place).
func groupedAt(d diagnose.Digest, line string) bool {
	for _, f := range d.Findings {
		for _, a := range f.Also {
			if a != "" && strings.Contains(line, a) {
				return true
			}
		}
	}
	return false
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func stripColours(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < '@' || s[j] > '~') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

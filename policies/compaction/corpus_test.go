package compaction

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/eval/corpus"
	"github.com/contextcompiler/ctxc/internal/facts"
	"github.com/contextcompiler/ctxc/policies/agentstate"
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
			if !strings.Contains(collapse(text), "[call c1]") {
				t.Errorf("the failed call is not named by its id:\n%s", text)
			}
			checkIdentifies(t, text, c)
		})
	}
	if failed < 100 {
		t.Errorf("%d failed outputs in the corpus, want at least 100", failed)
	}
}

// checkIdentifies fails t for each line that identifies c's failure and is
// not in the summary text.
func checkIdentifies(t *testing.T, text string, c corpus.Case) {
	t.Helper()
	got := collapse(text)
	d := diagnose.Read(c.Output)
	for _, want := range c.Meta.Identifying {
		want = stripColours(want)
		// A line longer than the limit is kept elided (head and tail).
		if strings.Contains(got, collapse(want)) || strings.Contains(got, collapse(diagnose.Elide(want, diagnose.DefaultLimits.Runes))) || groupedAt(d, want) {
			continue
		}
		t.Errorf("identifying line not in the summary: %q\n%s", want, text)
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

// TestSummaryKeepsWhatAUserPasted: a user who pastes what a command printed,
// introduced by the command line, reports trouble; for every failed output
// of the recorded corpus, a summary of that message keeps every line that
// identifies the failure, as for a failed tool call. A source file of the
// corpus's projects that the user pastes, introduced by its name, adds no
// line, though its code uses error words.
func TestSummaryKeepsWhatAUserPasted(t *testing.T) {
	cases, err := corpus.All()
	if err != nil {
		t.Logf("malformed cases left out (corpus's own test names them): %v", err)
	}
	summarize := func(t *testing.T, text string) string {
		t.Helper()
		span := []agentstate.Message{{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}}}
		out, err := DeterministicSummarizer{}.Summarize(context.Background(), SummaryRequest{Span: span, BudgetTokens: math.MaxInt32})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	pasted := 0
	for _, c := range cases {
		if !c.Meta.Failed || !facts.IntroducesRun("`"+c.Meta.Command+"`:") || strings.Contains(c.Output, "```") {
			continue
		}
		pasted++
		t.Run(c.ID, func(t *testing.T) {
			text := summarize(t, "The release is blocked.\n\n`"+c.Meta.Command+"` printed this:\n```\n"+c.Output+"\n```\nAny idea?")
			checkIdentifies(t, text, c)
		})
	}
	if pasted < 100 {
		t.Errorf("%d failed outputs pasted, want at least 100", pasted)
	}

	sources, _ := filepath.Glob("../../internal/eval/corpus/testdata/projects/*/*/*.*")
	read := 0
	for _, path := range sources {
		src, err := os.ReadFile(path)
		if err != nil || strings.Contains(string(src), "```") || !slices.Contains([]string{".go", ".py", ".js", ".ts", ".php", ".java", ".c", ".rs"}, filepath.Ext(path)) {
			continue
		}
		read++
		name := filepath.Base(path)
		text := summarize(t, "Here's `"+name+"`:\n```\n"+string(src)+"\n```")
		if notes := summarySection(t, text, secUserNotes); len(notes) != 0 {
			t.Errorf("%s pasted by name: user notes %q, want none", path, notes)
		}
	}
	if read < 50 {
		t.Errorf("%d source files pasted, want at least 50", read)
	}
}

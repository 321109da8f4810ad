package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/eval/corpus"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// summarySection returns the items of one section of a deterministic summary.
func summarySection(t *testing.T, text, title string) []string {
	t.Helper()
	items, _, ok := parseSummary(text)
	if !ok {
		t.Fatalf("not a deterministic summary:\n%s", text)
	}
	return items[title]
}

func summarizeSpan(t *testing.T, span []agentstate.Message, budget int) string {
	t.Helper()
	text, err := DeterministicSummarizer{}.Summarize(context.Background(), SummaryRequest{Span: span, BudgetTokens: budget})
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// step is an assistant message with prose beside a tool call, and the call's result.
func step(id, prose, command, output string, failed bool) []agentstate.Message {
	args, _ := json.Marshal(map[string]string{"command": command})
	call := "call_" + id
	return []agentstate.Message{
		{ID: "a" + id, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart(prose), {Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: call, Name: "bash", ArgumentsJSON: string(args)}}}},
		{ID: "t" + id, Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: call, Name: "bash", Content: output, IsError: failed}}}},
	}
}

func TestSummaryKeepsWhatTheAssistantFoundInItsWords(t *testing.T) {
	span := []agentstate.Message{{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("The nightly import is slow, find out why.")}}}
	span = append(span, step("1", "Looking at how the importer is constructed.", "sed -n 1,80p importer.py", "import re\n", false)...)
	span = append(span, step("2", "After profiling: 80% of the time is regex compilation inside the loop. Hoisting it out.", "python3 -m cProfile importer.py", "ok\n", false)...)
	span = append(span, step("3", "It's a race between the cleanup job and the upload finishing; the job deletes the temp file mid-write.", "ls /tmp/uploads", "a.part\n", false)...)
	text := summarizeSpan(t, span, math.MaxInt32)
	want := []string{
		"After profiling: 80% of the time is regex compilation inside the loop. Hoisting it out.",
		"It's a race between the cleanup job and the upload finishing; the job deletes the temp file mid-write.",
	}
	if diff := cmp.Diff(want, summarySection(t, text, secDone)); diff != "" {
		t.Errorf("work done (-want +got):\n%s\n%s", diff, text)
	}
}

func TestSummaryShortensTheOldestFailuresFirst(t *testing.T) {
	cases, _ := corpus.All()
	var tracebacks []corpus.Case
	for _, c := range cases {
		if c.Meta.Family == "python" && c.Meta.Failed && strings.Contains(c.Output, "Traceback (most recent call last)") && len(tracebacks) < 8 {
			tracebacks = append(tracebacks, c)
		}
	}
	if len(tracebacks) < 6 {
		t.Fatalf("%d Python tracebacks in the corpus, want at least 6", len(tracebacks))
	}
	span := []agentstate.Message{{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("Fix the ledger scripts.")}}}
	for i, c := range tracebacks {
		span = append(span, step(fmt.Sprint(i), "", c.Meta.Command, c.Output, true)...)
		span = append(span, step(fmt.Sprint(i)+"ok", "", c.Meta.Command, "done\n", false)...)
	}
	full := summarizeSpan(t, span, math.MaxInt32)
	b := newSummaryBuilder(SummaryRequest{})
	fullTokens := b.count(full)
	// Room for all but about a third of the failures' second lines.
	text := summarizeSpan(t, span, fullTokens-fullTokens/8)
	items := summarySection(t, text, secResolved)
	if len(items) != len(tracebacks) {
		t.Fatalf("%d resolved failures listed, want %d:\n%s", len(items), len(tracebacks), text)
	}
	shortened := 0
	for i, it := range items {
		if !strings.Contains(it, diagnose.LineSep) {
			shortened++
			if shortened != i+1 {
				t.Errorf("failure %d shortened after a newer one was kept whole:\n%s", i, text)
			}
		}
	}
	if shortened == 0 || shortened == len(items) {
		t.Errorf("%d of %d failures shortened, want some but not all:\n%s", shortened, len(items), text)
	}
	// Each keeps the line that names it.
	for i, c := range tracebacks {
		d := diagnose.Read(c.Output)
		d.Failed = true
		first, _, _ := strings.Cut(d.Lines(diagnose.DefaultLimits)[0], diagnose.LineSep)
		if !strings.Contains(text, first) {
			t.Errorf("failure %d lost its first line %q:\n%s", i, first, text)
		}
	}
}

func TestShortFailureKeepsAUnionType(t *testing.T) {
	line := `bash: app/rates.py:22:12 - error: Type "Decimal | None" is not assignable to return type "Decimal"` + diagnose.LineSep + "return rates.get(zone)"
	want := `bash: app/rates.py:22:12 - error: Type "Decimal | None" is not assignable to return type "Decimal"`
	if got := shortFailure(line); got != want {
		t.Errorf("shortFailure = %q, want %q", got, want)
	}
}

func TestGroupTooLargeKeepsTheFailuresThatFit(t *testing.T) {
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("src/pricing.ts(%d,3): error TS2322: Type 'string' is not assignable to type 'number'.", i+1))
	}
	b := newSummaryBuilder(SummaryRequest{})
	item := "bash: " + strings.Join(lines, groupSep) + resolvedMark
	part, cut := b.trimGroup(item, resolvedMark, b.count(item)/2)
	if cut == 0 || cut == len(lines) {
		t.Fatalf("cut %d of %d lines, want some", cut, len(lines))
	}
	kept := strings.Split(strings.TrimSuffix(strings.TrimPrefix(part, "bash: "), resolvedMark), groupSep)
	if diff := cmp.Diff(append(lines[:len(lines)-cut:len(lines)-cut], fmt.Sprintf("… and %d more", cut)), kept); diff != "" {
		t.Errorf("trimmed group (-want +got):\n%s", diff)
	}
	// A later merge reads the kept lines apart again and forgets the count.
	regrouped := groupByTool([]string{part}, resolvedMark)
	if got := strings.Count(strings.Join(regrouped, "\n"), "… and"); got != 0 {
		t.Errorf("regrouped items carry %d cut counts: %q", got, regrouped)
	}
}

func TestSummaryBudget(t *testing.T) {
	tests := []struct {
		name                     string
		ratio                    float64
		maxTokens, target, limit int
		want                     int
	}{
		{"a share of the target", 0.5, 0, 7200, 12000, 3600},
		{"above the target when facts need it", 1.3, 0, 7200, 12000, 9360},
		{"never more than four fifths of the window", 2, 0, 7200, 12000, 9600},
		{"nor less than the target for it", 2, 0, 11000, 12000, 11000},
		{"a fixed cap", 1.3, 2000, 7200, 12000, 2000},
		{"however small the window, the least budget", 1, 0, 100, 200, 256},
		// The compiled view: a newest turn of 4,000 tokens and a preamble of
		// 500 leave the summaries 7,500, less than four fifths.
		{"in the compiled view, what the newest turn leaves", 1.3, 0, 7200, 12000, 7500},
		{"in the compiled view, room beside the newest turn: the share", 2, 0, 7200, 24000, 14400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultSummarizeConfig()
			cfg.MaxSummaryRatio, cfg.MaxSummaryTokens = tt.ratio, tt.maxTokens
			room := math.MaxInt
			if strings.HasPrefix(tt.name, "in the compiled view") {
				// The protected newest turn (the first task too) and the preamble.
				entries := []agentstate.Entry{{Message: agentstate.Message{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("Fix the build.")}}, Tokens: 4000, Counted: true}}
				w, _ := policies.NewWork(policies.Input{})
				w.Entries = entries
				room = tt.limit - 300 - 200 - protectedTokens(entries, policies.Protection(w))
			}
			if got := (summarize{cfg: cfg}).summaryBudget(tt.target, tt.limit, room); got != tt.want {
				t.Errorf("summaryBudget = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSummarizeStopsWithItsContext: a summary asked for after its caller
// has gone returns the context's error and leaves nothing in the Memo that a
// later request could be answered from.
func TestSummarizeStopsWithItsContext(t *testing.T) {
	var span []agentstate.Message
	for i := range 2000 {
		span = append(span, step(strconv.Itoa(i), "Running the build again.", "go build ./...", "ok", false)...)
	}
	span = append(span, step("last", "The build fails.", "go build ./...", "main.go:3:2: \"os\" imported and not used", true)...)
	d := DeterministicSummarizer{Memo: NewMemo(nil)}
	req := SummaryRequest{Span: span, BudgetTokens: 400}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if text, err := d.Summarize(ctx, req); err == nil || text != "" {
		t.Errorf("after the caller had gone: %q, %v; want nothing and the context's error", text, err)
	}
	got, err := d.Summarize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := summarizeSpan(t, span, 400); got != want {
		t.Errorf("the Memo answered with what a cancelled request left:\n%s\nwant\n%s", got, want)
	}
}

// A merged summary this run wrote passes its covered ids on whole; the
// result is what the exact way (each id through the dedupe) gives, also
// when one of its ids is met again in the span or shown outside it, which
// sends collect back to the exact way.
func TestCollectInheritsAMergedSummarysCoversExactly(t *testing.T) {
	summary := func(covers ...string) agentstate.Entry {
		return agentstate.Entry{Message: agentstate.Message{ID: "ctxc-summary-x", Role: agentstate.RoleUser, Kind: agentstate.KindSummary,
			Parts: []agentstate.Part{agentstate.TextPart("## Summary")}, CoversMessageIDs: covers}}
	}
	tests := []struct {
		name    string
		entries []agentstate.Entry
		want    []string
	}{
		{"apart", append([]agentstate.Entry{summary("a", "b", "c")}, agentstate.EntriesFromLog([]agentstate.Message{userMsg("d", "d"), userMsg("e", "e")})...),
			[]string{"a", "b", "c", "d", "e"}},
		{"met again", append([]agentstate.Entry{summary("a", "d", "b")}, agentstate.EntriesFromLog([]agentstate.Message{userMsg("d", "d"), userMsg("e", "e")})...),
			[]string{"a", "d", "b", "e"}},
		{"shown outside", append([]agentstate.Entry{summary("a", "z")}, agentstate.EntriesFromLog([]agentstate.Message{userMsg("d", "d"), userMsg("z", "z")})...),
			[]string{"a", "d"}},
	}
	for _, tt := range tests {
		remove := make([]bool, len(tt.entries))
		for i := range remove {
			remove[i] = tt.name != "shown outside" || i < 2
		}
		w, _ := policies.NewWork(policies.Input{})
		w.Entries = tt.entries
		// As replace left them when the run wrote the summary.
		for _, id := range tt.entries[0].Message.CoversMessageIDs {
			w.Dispose(policies.MessageReport{MessageID: id, Disposition: policies.DispositionSummarized, Policy: TypeSummarize})
		}
		visible := make([]bool, len(tt.entries))
		for _, whole := range []bool{false, true} {
			p := summaryPlan{remove: remove}
			p.reset()
			summarize{}.collect(planView{entries: w.Entries, log: w, counter: w.Counter()}, &p, visible, whole)
			if diff := cmp.Diff(tt.want, p.covers); diff != "" {
				t.Errorf("%s (whole %v): covers (-want +got):\n%s", tt.name, whole, diff)
			}
		}
	}
}

// A summary merged again and again (one per compaction point of a long log)
// takes its predecessor's ids in place: every summary's ids stay unique and
// apart from what the view shows, and the summary a merge replaced still
// holds exactly the ids it held (appending in place never reaches them).
func TestRepeatedMergesKeepEverySummarysCovers(t *testing.T) {
	p := newPolicy(t, NewSummarizeFactory(Deps{}), "{min_span_messages: 1}")
	merges := 0
	for seed := int64(0); seed < 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		opts := statetest.DefaultOptions()
		opts.Turns = 12 + r.Intn(8)
		w, ctl := statetest.WorkControl(statetest.Generate(r, opts), statetest.RecentTurns(1))
		type held struct {
			covers []string
			copied []string
		}
		var summaries []held
		for step := range 6 {
			ctl.SetCompactionTarget(w.UsedTokens() * (60 - 5*step) / 100)
			if err := run(p, w); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			shown := map[string]bool{}
			for i := range w.Entries {
				if id := w.Entries[i].SourceID; id != "" {
					shown[id] = true
				}
			}
			for i := range w.Entries {
				m := &w.Entries[i].Message
				if m.Kind != agentstate.KindSummary || w.Entries[i].SourceID != "" {
					continue
				}
				seen := map[string]bool{}
				for _, id := range m.CoversMessageIDs {
					if seen[id] || shown[id] {
						t.Fatalf("seed %d step %d: summary %s covers %q twice or while it is shown", seed, step, m.ID, id)
					}
					seen[id] = true
				}
				if len(summaries) == 0 || !slices.Equal(summaries[len(summaries)-1].covers, m.CoversMessageIDs) {
					if len(summaries) > 0 && len(m.CoversMessageIDs) > len(summaries[len(summaries)-1].covers) {
						merges++
					}
					summaries = append(summaries, held{m.CoversMessageIDs, slices.Clone(m.CoversMessageIDs)})
				}
			}
			for k, s := range summaries {
				if !slices.Equal(s.covers, s.copied) {
					t.Fatalf("seed %d step %d: summary %d's covers changed after it was replaced", seed, step, k)
				}
			}
		}
	}
	if merges == 0 {
		t.Fatal("no summary was merged into a larger one: the test needs merges")
	}
	t.Logf("%d merges", merges)
}

// TestMergeCountsWhatEarlierSummariesLeftOut: a summary that merges one
// which had left items out says how many all of them left out, so the count
// of what is missing is exact however many merges it took.
func TestMergeCountsWhatEarlierSummariesLeftOut(t *testing.T) {
	earlier := "Summary of 12 earlier messages, written by ctxc without a model.\n\n## User notes\n- Lena wrote most of the caching layer.\n\n" +
		"[... 5 items (about 120 tokens) left out to fit the summary budget: 3 user notes, 2 decisions and conclusions]\n"
	var notes []agentstate.Message
	for k := 0; k < 30; k++ {
		notes = append(notes, agentstate.Message{ID: fmt.Sprintf("u%d", k), Role: agentstate.RoleUser,
			Parts: []agentstate.Part{agentstate.TextPart(fmt.Sprintf("The nightly export job %d writes its report to bucket exports-%d.", k, k))}})
	}
	text, err := DeterministicSummarizer{}.Summarize(context.Background(), SummaryRequest{Merge: []string{earlier}, Span: notes, BudgetTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	sections, _ := omittedOf(text)
	kept := strings.Count(text, "nightly export job") + strings.Count(text, "Lena wrote")
	if got, want := sections[secUserNotes], 3+31-kept; got != want {
		t.Errorf("the summary counts %d user notes left out, want %d (3 before, %d of 31 now):\n%s", got, want, 31-kept, text)
	}
	if sections[secDecisions] != 2 {
		t.Errorf("the 2 decisions an earlier merge left out are not counted:\n%s", text)
	}
}

// summarizerFunc is a Summarizer written as a function (a model's stand-in).
type summarizerFunc func(SummaryRequest) string

func (f summarizerFunc) Summarize(_ context.Context, req SummaryRequest) (string, error) {
	return f(req), nil
}

// TestWriteNamesAMergedOpenFailureOnce: a failure a merged summary lists as
// open stays named in the summary that replaces it (invariant 5), once: the
// deterministic summary that settled it (another command of its tool went
// through since) lists it among the errors not seen fixed, by its finding,
// and is not given it again with its call, outside its budget; a summary
// that names it nowhere is.
func TestWriteNamesAMergedOpenFailureOnce(t *testing.T) {
	finding := "ValueError: invalid literal for int() with base 10: 'n/a' [E-7599-032]"
	merged := "Summary of 4 earlier messages (m1 to m4), written by ctxc without a model.\n\n" +
		"## Errors still open\n- bash(command=sh verify.sh 32) [call c32]: " + finding + " ¦ File \"import_price.py\", line 44, in load_rows\n"
	span := append([]agentstate.Message{userMsg("u5", "Run the next checks on ./inventory.")},
		step("6", "Running check 33.", "sh verify.sh 33", "check 33 passed\n", false)...)
	tests := []struct {
		name       string
		summarizer Summarizer
		wantNamed  bool // the summary gives it again with its call
	}{
		{"settled by the deterministic summary", DeterministicSummarizer{}, false},
		{"named nowhere by a model", summarizerFunc(func(SummaryRequest) string { return "The checks ran.\n" }), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize{cfg: DefaultSummarizeConfig(), summarizer: tt.summarizer}
			p := summaryPlan{span: span, merge: []string{merged}, budget: 2000}
			text, _, err := s.write(context.Background(), nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(text, "[E-7599-032]"); got != 1 {
				t.Errorf("the failure is named %d times, want once:\n%s", got, text)
			}
			if got := strings.Contains(text, "[call c32]"); got != tt.wantNamed {
				t.Errorf("named with its call: %v, want %v:\n%s", got, tt.wantNamed, text)
			}
		})
	}
}

// TestLeavesOutFact: a merge's summary leaves out a fact when, within its
// budget, it leaves out more items of a fact section than the summaries it
// merges had left out already; lighter items left out do not count.
func TestLeavesOutFact(t *testing.T) {
	var notes strings.Builder
	for k := 0; k < 12; k++ {
		fmt.Fprintf(&notes, "- The nightly export job %d writes its report to bucket exports-%d.\n", k, k)
	}
	merged := "Summary of 12 earlier messages, written by ctxc without a model.\n\n## User notes\n" + notes.String() +
		"\n## Files and resources\n- internal/export/job.go\n- internal/export/bucket.go\n\n" +
		"[... 2 items (about 40 tokens) left out to fit the summary budget: 2 user notes]\n"
	s := summarize{cfg: DefaultSummarizeConfig()}
	req := SummaryRequest{Merge: []string{merged}}
	tests := []struct {
		name   string
		budget int
		want   bool
	}{
		{"room for every note", 2000, false},
		{"room for the notes, not the files", 260, false},
		{"room for a few notes", 120, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.leavesOutFact(context.Background(), req, tt.budget); got != tt.want {
				text, _ := s.det.fit(context.Background(), SummaryRequest{Merge: req.Merge, BudgetTokens: tt.budget})
				t.Errorf("leavesOutFact = %v, want %v:\n%s", got, tt.want, text)
			}
		})
	}
}

package isolate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/facts"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Boundary isolates the tool trace at execution boundaries. The running
// execution's trace stays. For each finished execution, every tool unit (a
// calling assistant message and its results) whose messages all belong to that
// execution is replaced by one record message per execution, "ctxc-trace-<id>"
// (role assistant, Kind placeholder), placed where the first replaced unit was;
// it lists each call with its outcome (a failure by the line that names its
// error) and what the assistant decided or found along the way, verbatim.
// User messages, final answers, events and
// summaries stay. A unit holding a pinned message or an unresolved failure
// (policies.UnresolvedFailures) stays verbatim. Messages without an
// ExecutionID are conversation and stay. Replaced log messages are disposed
// DROPPED with the record's id in the reason.
func Boundary(w *policies.Work, cfg *BoundaryConfig, outputs *diagnose.Cache) {
	entries := w.Entries
	n := len(entries)
	runningID := ""
	if w.State() != nil && w.State().Execution.Running() {
		runningID = w.State().Execution.ID
	}
	unresolved := make(map[int]bool)
	for _, i := range policies.UnresolvedFailures(entries) {
		unresolved[i] = true
	}
	replace := make([]bool, n)
	found := false
	for _, u := range policies.Units(entries) {
		head := &entries[u.Start].Message
		exec := head.ExecutionID
		if !policies.IsToolTrace(head) || exec == "" || exec == runningID {
			continue
		}
		ok := true
		for j := u.Start; j < u.End && ok; j++ {
			m := &entries[j].Message
			ok = m.ExecutionID == exec && !m.Pinned && !unresolved[j]
		}
		if ok {
			for j := u.Start; j < u.End; j++ {
				replace[j] = true
			}
			found = true
		}
	}
	if !found {
		return
	}
	ids := make(map[string]bool, n)
	for i := range entries {
		ids[entries[i].Message.ID] = true
	}
	maxCalls := 50
	if cfg != nil && cfg.MaxRecordCalls > 0 {
		maxCalls = cfg.MaxRecordCalls
	}
	records := make(map[string]*traceRecord)
	out := make([]agentstate.Entry, 0, n)
	for i := range entries {
		if !replace[i] {
			out = append(out, entries[i])
			continue
		}
		m := &entries[i].Message
		rec := records[m.ExecutionID]
		if rec == nil {
			rec = &traceRecord{exec: m.ExecutionID, pos: len(out), id: uniqueID(ids, "ctxc-trace-"+m.ExecutionID), results: map[string]*agentstate.ToolResult{}}
			records[m.ExecutionID] = rec
			out = append(out, agentstate.Entry{Message: agentstate.Message{ID: rec.id, Role: agentstate.RoleAssistant, Kind: agentstate.KindPlaceholder, ExecutionID: m.ExecutionID}})
		}
		rec.add(m)
		if id := entries[i].SourceID; id != "" {
			rec.covers = append(rec.covers, id)
		}
		w.DisposeEntry(&entries[i], policies.MessageReport{Disposition: policies.DispositionDropped,
			Reason: fmt.Sprintf("tool trace of finished execution %s replaced by %s", m.ExecutionID, rec.id), Policy: TypeBoundary})
	}
	w.Entries = out
	for _, rec := range records {
		w.Entries[rec.pos].Message.Parts = []agentstate.Part{agentstate.TextPart(rec.text(w.Counter(), maxCalls, outputs))}
		// The log messages it stands for: a summary of the record reads them.
		w.Entries[rec.pos].Message.CoversMessageIDs = rec.covers
		w.Touch(rec.pos)
	}
}

// maxStatedParagraph bounds a paragraph a record keeps whole.
const maxStatedParagraph = 320

// traceRecord gathers the calls and results of one execution's replaced trace.
type traceRecord struct {
	exec, id string
	pos      int
	calls    []agentstate.ToolCall
	results  map[string]*agentstate.ToolResult
	strays   int      // results without a call in the replaced trace
	stated   []string // the assistant's decisions and findings along the way
	covers   []string // the log messages it replaces
}

func (r *traceRecord) add(m *agentstate.Message) {
	if m.Role == agentstate.RoleAssistant && m.Mask == nil {
		// What the assistant concluded or decided between its calls is no
		// trace: the record keeps it verbatim, a short paragraph whole (a
		// cause and what it will do about it), else its sentences.
		for _, p := range facts.Paragraphs(m.Text()) {
			ss := facts.Sentences(p)
			classes := facts.ClassifyAll(ss, false)
			for len(ss) > 0 && classes[0] == facts.Filler {
				ss, classes = ss[1:], classes[1:] // "Let me look." before it says nothing
			}
			// Between its calls an agent says what it found and what it
			// will do: every sentence but filler is kept.
			var kept []string
			for k, c := range classes {
				if c != facts.Filler {
					kept = append(kept, ss[k])
				}
			}
			whole := strings.Join(ss, " ")
			switch {
			case len(kept) > 0 && len(ss) > 1 && utf8.RuneCountInString(whole) <= maxStatedParagraph:
				r.stated = append(r.stated, whole)
			default:
				r.stated = append(r.stated, kept...)
			}
		}
	}
	for k := range m.Parts {
		p := &m.Parts[k]
		switch p.Kind {
		case agentstate.PartToolCall:
			r.calls = append(r.calls, p.ToolCall)
		case agentstate.PartToolResult:
			r.results[p.ToolResult.ToolCallID] = &p.ToolResult
		}
	}
}

func (r *traceRecord) text(counter agentstate.TokenCounter, maxCalls int, outputs *diagnose.Cache) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool trace of execution %s (%d calls): ", r.exec, len(r.calls))
	seen := make(map[string]bool, len(r.calls))
	for k, c := range r.calls {
		seen[c.ID] = true
		if k == maxCalls {
			fmt.Fprintf(&b, "; and %d more calls", len(r.calls)-maxCalls)
			break
		}
		if k > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.Name)
		if args := argsSummary(c.ArgumentsJSON); args != "" {
			b.WriteString("(" + args + ")")
		}
		res := r.results[c.ID]
		switch {
		case res == nil:
			b.WriteString(" -> no result")
		case res.IsError || outputs.Read(res.Content).Failed:
			// What identifies the failure (the diagnostic with its location,
			// the exception and its frame, the failing test), not the
			// output's envelope; an output that failed in its own words (an
			// HTTP 404 through curl -i) too.
			b.WriteString(" -> error: " + strings.Join(outputs.Identify(res.Content, diagnose.DefaultLimits), " ¦ "))
		default:
			b.WriteString(" -> ok, " + tokens(countText(counter, res.Content)))
		}
	}
	for id := range r.results {
		if !seen[id] {
			r.strays++
		}
	}
	if r.strays > 0 {
		fmt.Fprintf(&b, "; %d result(s) without a call", r.strays)
	}
	if len(r.stated) > 0 {
		b.WriteString("\nStated along the way: " + strings.Join(r.stated, " "))
	}
	return b.String()
}

func countText(counter agentstate.TokenCounter, s string) int {
	if counter == nil {
		return (len(s) + 3) / 4
	}
	return counter.CountText(s)
}

func tokens(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d tokens", n)
	}
	return fmt.Sprintf("%.1fK tokens", float64(n)/1000)
}

// truncate cuts s to at most n runes, marking the cut, and makes it valid UTF-8.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ToValidUTF8(headRunes(s, n), "\uFFFD") + "…"
}

// argsSummary renders a call's JSON object arguments as "k=v, k=v" with
// scalars only and long values cut; other JSON is shown cut.
func argsSummary(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "{}" {
		return ""
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(raw), &obj); err != nil {
		return truncate(raw, 60)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := obj[k].(type) {
		case string:
			v = x
		case float64, bool, nil:
			v = fmt.Sprint(x)
		default:
			v = "…"
		}
		parts = append(parts, k+"="+truncate(v, 40))
	}
	return truncate(strings.Join(parts, ", "), 120)
}

func uniqueID(ids map[string]bool, id string) string {
	cand := id
	for k := 2; ids[cand]; k++ {
		cand = fmt.Sprintf("%s-%d", id, k)
	}
	ids[cand] = true
	return cand
}

// headRunes returns the first n runes of s.
func headRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// tailRunes returns the last n runes of s.
func tailRunes(s string, n int) string {
	j := len(s)
	for k := 0; k < n && j > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
	}
	return s[j:]
}

package project

import (
	"slices"
	"sort"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Project turns w.Entries into the given view, in three steps:
//
//  1. Summaries (Kind summary with CoversMessageIDs, not role tool) stand in for
//     the messages they cover: those are removed (Disposition SUMMARIZED) and
//     the summary moves to where the first removed one was. Coverage is by whole
//     tool units: covering one message of a unit covers the unit. A unit that
//     holds the first task, a pinned message, a message of the running
//     execution, or an unresolved failure the summary does not name
//     (policies.NamesFailure) is never covered; a summary covered by another summary goes,
//     and the outer summary takes the place of everything both covered.
//  2. The conversation view keeps user and system messages (events, summaries
//     included) and assistant messages without tool calls that have text or a
//     mask, with their reasoning parts removed (Disposition TRUNCATED) unless
//     pinned or of the running execution; the tool trace is dropped (Disposition
//     DROPPED, "conversation view") except units holding a pinned message. The
//     reasoning view keeps everything.
//  3. Masked messages (Message.Mask set) are shown as Mask.Placeholder
//     (Disposition MASKED): a tool message keeps one result per original result
//     with the placeholder as content, an assistant message keeps its tool calls
//     after one placeholder text part, anything else becomes one text part. The
//     Mask stays on the message. Pinned messages and the first task are shown
//     verbatim even when masked.
func Project(w *policies.Work, view agentstate.View) {
	running := ""
	if st := w.State(); st != nil && st.Execution.Running() {
		running = st.Execution.ID
	}
	w.Entries = applySummaries(w.Entries, running, w)
	if view == agentstate.ViewConversation {
		var touched []int
		w.Entries, touched = conversation(w.Entries, running, w)
		for _, i := range touched {
			w.Touch(i)
		}
	}
	for _, i := range applyMasks(w.Entries, w) {
		w.Touch(i)
	}
}

// ledger records what became of the log messages entries show (*policies.Work).
type ledger interface {
	DisposeEntry(e *agentstate.Entry, r policies.MessageReport)
}

func isSummary(m *agentstate.Message) bool {
	return m.Kind == agentstate.KindSummary && len(m.CoversMessageIDs) > 0 && m.Role != agentstate.RoleTool
}

// mustStay marks the entries no summary may remove: the first task, pinned
// messages, the running execution, and unresolved failures unless the summary
// that claims them names them (claim[j] is 1 + the claiming summary's index).
// running is the running execution's id, "" when none runs.
func mustStay(entries []agentstate.Entry, running string, claim []int) []bool {
	stay := make([]bool, len(entries))
	if first := policies.FirstTask(entries); first >= 0 {
		stay[first] = true
	}
	for i := range entries {
		m := &entries[i].Message
		if m.Pinned || (running != "" && m.ExecutionID == running) {
			stay[i] = true
		}
	}
	// Invariant 5: a failure stays visible until a later call resolves it,
	// shown or named by the summary that takes its place.
	for _, i := range policies.UnresolvedFailures(entries) {
		if by := claim[i]; by == 0 || !policies.NamesFailure(entries[by-1].Message.Text(), &entries[i].Message) {
			stay[i] = true
		}
	}
	return stay
}

// applySummaries returns entries with the summaries in the place of what
// they cover, recording what they covered in l.
func applySummaries(entries []agentstate.Entry, running string, l ledger) []agentstate.Entry {
	if !slices.ContainsFunc(entries, func(e agentstate.Entry) bool { return isSummary(&e.Message) }) {
		return entries // the common case; spare the index of every id
	}
	n := len(entries)
	index := make(map[string]int, n)
	for i := n - 1; i >= 0; i-- {
		index[entries[i].Message.ID] = i
	}
	// claim[j] is 1 + the index of the summary that covers entry j, or 0.
	claim := make([]int, n)
	any := false
	for i := range entries {
		if !isSummary(&entries[i].Message) {
			continue
		}
		for _, id := range entries[i].Message.CoversMessageIDs {
			if j, ok := index[id]; ok && j != i && claim[j] == 0 {
				claim[j] = i + 1
				any = true
			}
		}
	}
	if !any {
		return entries
	}
	stay := mustStay(entries, running, claim)
	for _, u := range policies.Units(entries) {
		by, keep := 0, false
		for j := u.Start; j < u.End; j++ {
			keep = keep || stay[j]
			if by == 0 {
				by = claim[j]
			}
		}
		for j := u.Start; j < u.End; j++ {
			if keep {
				claim[j] = 0
			} else if by != 0 && claim[j] == 0 {
				claim[j] = by
			}
		}
	}
	// root follows a chain of covering summaries to one that is not covered
	// (-1 in a cycle); that summary takes the place of the whole chain.
	root := func(j int) int {
		for steps := 0; claim[j] != 0; steps++ {
			if steps > n {
				return -1
			}
			j = claim[j] - 1
		}
		return j
	}
	anchor := make(map[int]int)
	for j := range entries {
		if claim[j] == 0 {
			continue
		}
		if r := root(j); r >= 0 {
			if a, ok := anchor[r]; !ok || j < a {
				anchor[r] = j
			}
		}
	}
	type placed struct{ pos, i int }
	order := make([]placed, 0, n)
	for i := range entries {
		if claim[i] != 0 {
			by := &entries[claim[i]-1].Message
			l.DisposeEntry(&entries[i], policies.MessageReport{Disposition: policies.DispositionSummarized, Reason: "covered by " + by.ID, Policy: TypeProject})
			continue
		}
		pos := i
		if a, ok := anchor[i]; ok {
			pos = a
		}
		order = append(order, placed{pos, i})
	}
	sort.SliceStable(order, func(a, b int) bool { return order[a].pos < order[b].pos })
	out := make([]agentstate.Entry, len(order))
	for k, p := range order {
		out[k] = entries[p.i]
	}
	return out
}

// conversation returns the conversation view of entries (running is the
// running execution's id, "" for none), recording in l what it left out or
// cut, and the indexes in it of the entries it changed.
func conversation(entries []agentstate.Entry, running string, l ledger) (out []agentstate.Entry, touched []int) {
	keepUnit := make([]bool, len(entries))
	for _, u := range policies.Units(entries) {
		pinned := false
		for j := u.Start; j < u.End; j++ {
			pinned = pinned || entries[j].Message.Pinned
		}
		for j := u.Start; j < u.End; j++ {
			keepUnit[j] = pinned
		}
	}
	out = entries[:0:0]
	for i := range entries {
		e := entries[i]
		m := &e.Message
		switch {
		case keepUnit[i], m.Role == agentstate.RoleUser, m.Role == agentstate.RoleSystem,
			m.Kind == agentstate.KindSummary, m.Kind == agentstate.KindEvent:
		case m.Role == agentstate.RoleAssistant && !m.HasToolCalls() && (m.Mask != nil || strings.TrimSpace(m.Text()) != ""):
			if m.Pinned || (running != "" && m.ExecutionID == running) {
				break
			}
			parts := make([]agentstate.Part, 0, len(m.Parts))
			for _, p := range m.Parts {
				if p.Kind != agentstate.PartReasoning {
					parts = append(parts, p)
				}
			}
			if len(parts) < len(m.Parts) {
				m.Parts = parts
				touched = append(touched, len(out))
				l.DisposeEntry(&e, policies.MessageReport{Disposition: policies.DispositionTruncated, Reason: "reasoning omitted in conversation view", Policy: TypeProject})
			}
		default:
			l.DisposeEntry(&e, policies.MessageReport{Disposition: policies.DispositionDropped, Reason: "conversation view", Policy: TypeProject})
			continue
		}
		out = append(out, e)
	}
	return out, touched
}

// applyMasks shows the masked entries as their placeholders, recording it
// in l, and returns the indexes of the entries it changed.
func applyMasks(entries []agentstate.Entry, l ledger) (touched []int) {
	first := policies.FirstTask(entries)
	for i := range entries {
		m := &entries[i].Message
		if m.Mask == nil || m.Pinned || i == first {
			continue
		}
		ph := m.Mask.Placeholder
		var parts []agentstate.Part
		switch {
		case m.Role == agentstate.RoleTool:
			for _, p := range m.Parts {
				if p.Kind == agentstate.PartToolResult {
					p.ToolResult.Content = ph
					parts = append(parts, p)
				}
			}
		case m.Role == agentstate.RoleAssistant && m.HasToolCalls():
			parts = append(parts, agentstate.TextPart(ph))
			for _, p := range m.Parts {
				if p.Kind == agentstate.PartToolCall {
					parts = append(parts, p)
				}
			}
		}
		if len(parts) == 0 {
			parts = []agentstate.Part{agentstate.TextPart(ph)}
		}
		m.Parts = parts
		touched = append(touched, i)
		l.DisposeEntry(&entries[i], policies.MessageReport{Disposition: policies.DispositionMasked, Reason: "masked (" + m.Mask.Reason + "): shown as its placeholder", Policy: TypeProject})
	}
	return touched
}

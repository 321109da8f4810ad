package normalize

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// MissingResultContent is the content of a synthesized "result missing" result.
const MissingResultContent = "result missing: the tool call ended without returning a result"

// Normalize repairs w.Entries in place, in this order:
//
//  1. empty parts are removed (whitespace-only text, reasoning with neither
//     text nor signature, images with neither URL nor data, parts of no kind);
//  2. with cfg.DropOldReasoning, unpinned assistant messages older than the
//     latest assistant turn lose all their reasoning parts;
//  3. messages left without parts are dropped, unless they carry a Mask;
//  4. tool units are rebuilt: a result with no unanswered matching call earlier
//     in the view is dropped (an orphan, or a second result for one call); a
//     result separated from its call by other messages is moved to follow the
//     calling message's unit (a tool message holding results of several calls
//     is split, pieces after the first get the id "ctxc-split-<id>-<n>"); an
//     empty result name is filled from the call; each call of a finished
//     execution without a result gets a synthesized error result
//     "ctxc-missing-result-<call id>" after the unit's existing results.
//
// Calls of the running execution may stay unanswered. Events, including system
// messages inside the log, stay where they are. Masks are kept. Every fix is
// a Repair; every log message dropped or changed gets a Disposition.
func Normalize(w *policies.Work, cfg *Config) {
	runPasses(w, cfg, TypeNormalize, true)
}

// runPasses runs the repairs. With shortcut, the tool-unit rebuild is skipped
// when the units are already well formed: it is the one pass that copies the
// whole view, and a log that clients maintain through Route is almost always
// well formed. The tests prove the shortcut changes no result.
func runPasses(w *policies.Work, cfg *Config, policy string, shortcut bool) {
	n := &pass{w: w, policy: policy}
	n.removeEmptyParts()
	if cfg != nil && cfg.DropOldReasoning {
		n.dropOldReasoning()
	}
	n.dropEmptyMessages()
	if shortcut && toolUnitsWellFormed(w.Entries, runningExecution(w.State())) {
		return
	}
	n.rebuildToolUnits()
	n.warnOrphans()
}

// shownOrphans is how many dropped results' call ids a warning names.
const shownOrphans = 3

// warnOrphans says in one warning that results answering no call were
// dropped: a client that sent them has lost track of its calls, which the
// repairs alone (structured, and easy to leave unread) do not make plain.
func (n *pass) warnOrphans() {
	if len(n.orphans) == 0 {
		return
	}
	ids := make([]string, 0, shownOrphans)
	for _, id := range n.orphans[:min(len(n.orphans), shownOrphans)] {
		if len(id) > 64 {
			id = strings.ToValidUTF8(id[:64], "") + "…"
		}
		ids = append(ids, strconv.Quote(id))
	}
	more := ""
	if len(n.orphans) > shownOrphans {
		more = fmt.Sprintf(" and %d more", len(n.orphans)-shownOrphans)
	}
	n.w.Warn(fmt.Sprintf("%d tool result(s) answer no call earlier in the log and were dropped (call ids %s%s); see the report's repairs",
		len(n.orphans), strings.Join(ids, ", "), more))
}

// runningExecution is the id of st's running execution, "" when none runs.
func runningExecution(st *agentstate.State) string {
	if st != nil && st.Execution.Running() {
		return st.Execution.ID
	}
	return ""
}

// toolUnitsWellFormed reports whether rebuildToolUnits would change nothing:
// every tool message directly follows the unit of the assistant message whose
// calls it answers, holds only results, answers each call once and names its
// tool, and every call outside the running execution (running, its id or
// "") has its result.
func toolUnitsWellFormed(entries []agentstate.Entry, running string) bool {
	type call struct {
		id       string
		answered bool
	}
	var calls []call
	for i := 0; i < len(entries); {
		head := &entries[i].Message
		if head.Role == agentstate.RoleTool {
			return false
		}
		i++
		if head.Role != agentstate.RoleAssistant || !head.HasToolCalls() {
			continue
		}
		calls = calls[:0]
		for _, p := range head.Parts {
			if p.Kind == agentstate.PartToolCall {
				calls = append(calls, call{id: p.ToolCall.ID})
			}
		}
		for ; i < len(entries) && entries[i].Message.Role == agentstate.RoleTool; i++ {
			results := 0
			for _, p := range entries[i].Message.Parts {
				if p.Kind != agentstate.PartToolResult || p.ToolResult.Name == "" {
					return false
				}
				k := 0
				for k < len(calls) && calls[k].id != p.ToolResult.ToolCallID {
					k++
				}
				if k == len(calls) || calls[k].answered {
					return false
				}
				calls[k].answered = true
				results++
			}
			if results == 0 {
				return false
			}
		}
		if running != "" && head.ExecutionID == running {
			continue
		}
		for _, c := range calls {
			if !c.answered {
				return false
			}
		}
	}
	return true
}

type pass struct {
	w      *policies.Work
	policy string
	// orphans are the call ids of the results dropped for answering no call.
	orphans []string
}

func (n *pass) repaired(e *agentstate.Entry, kind, detail string) {
	n.w.Repair(policies.Repair{Kind: kind, MessageID: e.Message.ID, Detail: detail})
	n.w.DisposeEntry(e, policies.MessageReport{Disposition: policies.DispositionRepaired, Reason: detail, Policy: n.policy})
}

func (n *pass) dropped(e *agentstate.Entry, kind, detail string) {
	n.w.Repair(policies.Repair{Kind: kind, MessageID: e.Message.ID, Detail: detail})
	n.w.DisposeEntry(e, policies.MessageReport{Disposition: policies.DispositionDropped, Reason: detail, Policy: n.policy})
}

func emptyPart(p *agentstate.Part) bool {
	switch p.Kind {
	case agentstate.PartText:
		return blank(p.Text)
	case agentstate.PartReasoning:
		return p.Reasoning.Text == "" && len(p.Reasoning.Signature) == 0
	case agentstate.PartImage:
		return p.Image.URL == "" && len(p.Image.Data) == 0
	case agentstate.PartToolCall, agentstate.PartToolResult:
		return false
	}
	return true
}

// blank reports whether s is only white space. Nearly every text starts with
// a printable ASCII byte, which settles it at once: every part of every
// message is asked on every call.
func blank(s string) bool {
	if len(s) > 0 && s[0] > ' ' && s[0] < utf8.RuneSelf {
		return false
	}
	return strings.TrimSpace(s) == ""
}

// keepParts replaces entry i's parts with those keep accepts, copying so the
// log is untouched, and returns how many it removed.
func (n *pass) keepParts(i int, keep func(p *agentstate.Part) bool) int {
	m := &n.w.Entries[i].Message
	removed := 0
	for k := range m.Parts {
		if !keep(&m.Parts[k]) {
			removed++
		}
	}
	if removed == 0 {
		return 0
	}
	parts := make([]agentstate.Part, 0, len(m.Parts)-removed)
	for k := range m.Parts {
		if keep(&m.Parts[k]) {
			parts = append(parts, m.Parts[k])
		}
	}
	m.Parts = parts
	n.w.Touch(i)
	return removed
}

func (n *pass) removeEmptyParts() {
	for i := range n.w.Entries {
		if k := n.keepParts(i, func(p *agentstate.Part) bool { return !emptyPart(p) }); k > 0 {
			n.repaired(&n.w.Entries[i], policies.RepairEmptyPartRemoved, fmt.Sprintf("removed %d empty part(s)", k))
		}
	}
}

// dropOldReasoning drops reasoning from assistant messages before the turn that
// holds the last assistant message; that turn's reasoning must stay intact.
func (n *pass) dropOldReasoning() {
	entries := n.w.Entries
	lastAssistant := -1
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Message.Role == agentstate.RoleAssistant {
			lastAssistant = i
			break
		}
	}
	latestTurn := 0
	for i := lastAssistant; i >= 0; i-- {
		if policies.IsTurnStart(&entries[i].Message) {
			latestTurn = i
			break
		}
	}
	for i := 0; i < latestTurn; i++ {
		if entries[i].Message.Role != agentstate.RoleAssistant || entries[i].Message.Pinned {
			continue
		}
		if k := n.keepParts(i, func(p *agentstate.Part) bool { return p.Kind != agentstate.PartReasoning }); k > 0 {
			n.repaired(&n.w.Entries[i], policies.RepairReasoningDropped, fmt.Sprintf("dropped %d reasoning part(s) of an older assistant turn", k))
		}
	}
}

func (n *pass) dropEmptyMessages() {
	empty := false
	for i := range n.w.Entries {
		empty = empty || (len(n.w.Entries[i].Message.Parts) == 0 && n.w.Entries[i].Message.Mask == nil)
	}
	if !empty {
		return
	}
	out := n.w.Entries[:0:0]
	for i := range n.w.Entries {
		e := &n.w.Entries[i]
		if len(e.Message.Parts) == 0 && e.Message.Mask == nil {
			n.dropped(e, policies.RepairEmptyMessageDropped, "message has no content")
			continue
		}
		out = append(out, *e)
	}
	if len(out) != len(n.w.Entries) {
		n.w.Entries = out
	}
}

// unit is an assistant message that calls tools, with the results gathered for it.
type unit struct {
	head     int // index of the calling message in the input entries
	names    map[string]string
	answered map[string]bool
	results  []agentstate.Entry
	touched  []bool
}

func (n *pass) rebuildToolUnits() {
	w := n.w
	in := w.Entries
	ids := make(map[string]bool, len(in))
	needed := false
	for i := range in {
		ids[in[i].Message.ID] = true
		needed = needed || in[i].Message.Role == agentstate.RoleTool || in[i].Message.HasToolCalls()
	}
	if !needed {
		return
	}
	owner := make(map[string]*unit)
	units := make(map[int]*unit)
	lastOther := -1 // latest non-tool entry seen
	for i := range in {
		m := &in[i].Message
		if m.Role != agentstate.RoleTool {
			lastOther = i
			if m.Role == agentstate.RoleAssistant && m.HasToolCalls() {
				u := &unit{head: i, names: map[string]string{}, answered: map[string]bool{}}
				for _, p := range m.Parts {
					if p.Kind == agentstate.PartToolCall {
						owner[p.ToolCall.ID] = u
						u.names[p.ToolCall.ID] = p.ToolCall.Name
					}
				}
				units[i] = u
			}
			continue
		}
		n.assignResults(&in[i], owner, lastOther, ids)
	}
	out := make([]agentstate.Entry, 0, len(in)+4)
	var touched []int
	running := w.State() != nil && w.State().Execution.Running()
	for i := range in {
		if in[i].Message.Role == agentstate.RoleTool {
			continue
		}
		out = append(out, in[i])
		u := units[i]
		if u == nil {
			continue
		}
		for k := range u.results {
			out = append(out, u.results[k])
			if u.touched[k] {
				touched = append(touched, len(out)-1)
			}
		}
		head := &in[i].Message
		if running && head.ExecutionID == w.State().Execution.ID {
			continue
		}
		for _, p := range head.Parts {
			if p.Kind != agentstate.PartToolCall || u.answered[p.ToolCall.ID] {
				continue
			}
			u.answered[p.ToolCall.ID] = true
			id := uniqueID(ids, "ctxc-missing-result-"+p.ToolCall.ID)
			out = append(out, agentstate.Entry{Message: agentstate.Message{
				ID: id, Role: agentstate.RoleTool, Kind: agentstate.KindRepair, ExecutionID: head.ExecutionID,
				Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{
					ToolCallID: p.ToolCall.ID, Name: p.ToolCall.Name, Content: MissingResultContent, IsError: true}}},
			}})
			touched = append(touched, len(out)-1)
			w.Repair(policies.Repair{Kind: policies.RepairMissingResultSynthesized, MessageID: head.ID,
				Detail: fmt.Sprintf("call %s (%s) of a finished execution has no result; added %s", p.ToolCall.ID, p.ToolCall.Name, id)})
		}
	}
	w.Entries = out
	for _, i := range touched {
		w.Touch(i)
	}
}

// assignResults gives each result of tool entry e to the unit whose call it
// answers, dropping orphans and splitting results of several units.
func (n *pass) assignResults(e *agentstate.Entry, owner map[string]*unit, lastOther int, ids map[string]bool) {
	m := &e.Message
	type group struct {
		u     *unit
		parts []agentstate.Part
	}
	var groups []group
	var others []agentstate.Part // non-result parts go with the first group
	var orphans []string
	filled := 0
	for _, p := range m.Parts {
		if p.Kind != agentstate.PartToolResult {
			others = append(others, p)
			continue
		}
		id := p.ToolResult.ToolCallID
		u := owner[id]
		if u == nil || u.answered[id] {
			orphans = append(orphans, id)
			continue
		}
		u.answered[id] = true
		if p.ToolResult.Name == "" && u.names[id] != "" {
			p.ToolResult.Name = u.names[id]
			filled++
		}
		g := -1
		for k := range groups {
			if groups[k].u == u {
				g = k
			}
		}
		if g < 0 {
			groups = append(groups, group{u: u})
			g = len(groups) - 1
		}
		groups[g].parts = append(groups[g].parts, p)
	}
	n.orphans = append(n.orphans, orphans...)
	for _, id := range orphans {
		n.w.Repair(policies.Repair{Kind: policies.RepairOrphanResultDropped, MessageID: m.ID,
			Detail: fmt.Sprintf("result for call %q has no unanswered matching call earlier in the view", id)})
	}
	if len(groups) == 0 {
		if len(orphans) == 0 {
			n.w.Repair(policies.Repair{Kind: policies.RepairOrphanResultDropped, MessageID: m.ID, Detail: "tool message holds no tool result"})
		}
		n.w.DisposeEntry(e, policies.MessageReport{Disposition: policies.DispositionDropped, Reason: "orphan tool result", Policy: n.policy})
		return
	}
	changed := len(orphans) > 0 || filled > 0 || len(groups) > 1
	if filled > 0 {
		n.w.Repair(policies.Repair{Kind: policies.RepairToolResultNameFilled, MessageID: m.ID, Detail: fmt.Sprintf("filled %d empty tool result name(s) from the call", filled)})
	}
	for k, g := range groups {
		piece := *e
		piece.Message.Parts = g.parts
		if k == 0 {
			piece.Message.Parts = append(append([]agentstate.Part(nil), others...), g.parts...)
		} else {
			piece.Message.ID = uniqueID(ids, fmt.Sprintf("ctxc-split-%s-%d", m.ID, k))
			piece.SourceID = ""
			n.w.Repair(policies.Repair{Kind: policies.RepairRoleOrderFixed, MessageID: m.ID, Detail: "results of another call split into " + piece.Message.ID})
		}
		moved := lastOther > g.u.head
		if moved {
			n.w.Repair(policies.Repair{Kind: policies.RepairRoleOrderFixed, MessageID: piece.Message.ID,
				Detail: "moved to follow its calling message"})
		}
		if (moved || changed) && piece.SourceID != "" {
			n.w.DisposeEntry(&piece, policies.MessageReport{Disposition: policies.DispositionRepaired, Reason: "tool unit repaired", Policy: n.policy})
		}
		g.u.results = append(g.u.results, piece)
		g.u.touched = append(g.u.touched, changed)
	}
}

func uniqueID(ids map[string]bool, id string) string {
	cand := id
	for k := 2; ids[cand]; k++ {
		cand = fmt.Sprintf("%s-%d", id, k)
	}
	ids[cand] = true
	return cand
}

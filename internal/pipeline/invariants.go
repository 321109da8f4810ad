package pipeline

import (
	"bytes"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// checker enforces the invariants of docs/ARCHITECTURE.md after every step
// once the log has been normalized. A violation is a bug in a policy: the run
// fails with agentstate.ErrInvariant instead of returning a corrupt context.
type checker struct {
	firstTask agentstate.Message
	hasFirst  bool
	pinned    map[string]agentstate.Message
	// failures are unresolved failed results that must stay visible: shown,
	// or named by a summary that covers them.
	failures  map[string]agentstate.Message
	reasoning bool
	// hints are the log positions (agentstate.Entry.LogPos) of the messages
	// the checks look for, so that finding them costs no lookup by id.
	hints map[string]int32

	// Set at the start of each compaction point.
	recent []agentstate.Message // the recency window, in order, but the task history
	// joined[k] says recent[k] followed recent[k-1] with nothing between:
	// only the running task's history may leave the window, so the rest of
	// it stays contiguous.
	joined      []bool
	instruction agentstate.Message // the user's instruction (policies.Instruction), ID "" for none
	running     map[string]agentstate.Message
	// scope holds the ids of the messages looked for that the view had when
	// the compaction point began: a point inside the log sees only a prefix
	// of it, so what lies beyond is not checked there.
	scope map[string]bool

	// index finds the view's entries; reused across steps, as the check
	// runs after every step of every compaction point of a long log.
	index viewIndex
	// checked is the view as the last full check saw it; checkedPoint the
	// compaction point (gen) whose checks it passed, -1 when it passed the
	// checks outside compaction.
	checked      []entryPrint
	checkedPoint int
	gen          int // counts beginCompaction calls
}

// viewIndex finds the view's entries by id. Entries that show a log message
// are found by their log position, checked against the id, in an array
// stamped per build: a map of every id in the view, built after each step
// at each compaction point, cost more than the compaction it checked. The
// others (summaries, notes, placeholders) are few and kept by id.
type viewIndex struct {
	build uint32
	stamp []uint32 // by log position: build when the view holds it
	at    []int32  // by log position: the index of the entry showing it
	other map[string]int
}

// logIndex finds a message's position in the request's log (*policies.Work).
type logIndex interface {
	LogIndex(id string, hint int32) (int, bool)
}

// index indexes a view of a log of logLen messages (positions found by log);
// it returns an id held by two entries, if any.
func (x *viewIndex) index(entries []agentstate.Entry, logLen int, log logIndex) (dup string) {
	if len(x.stamp) < logLen {
		x.stamp, x.at, x.build = make([]uint32, logLen), make([]int32, logLen), 0
	}
	x.build++
	if x.build == 0 { // wrapped: old stamps could match
		clear(x.stamp)
		x.build = 1
	}
	clear(x.other)
	for i := range entries {
		e := &entries[i]
		pos, inLog := log.LogIndex(e.Message.ID, e.LogPos)
		if !inLog {
			if x.other == nil {
				x.other = make(map[string]int)
			}
			if _, ok := x.other[e.Message.ID]; ok {
				return e.Message.ID
			}
			x.other[e.Message.ID] = i
			continue
		}
		if x.stamp[pos] == x.build {
			return e.Message.ID
		}
		x.stamp[pos], x.at[pos] = x.build, int32(i)
	}
	return ""
}

// find is the index of the entry with id in the view indexed last.
func (x *viewIndex) find(log logIndex, id string, hint int32) (int, bool) {
	if pos, ok := log.LogIndex(id, hint); ok {
		if x.stamp[pos] == x.build {
			return int(x.at[pos]), true
		}
		return 0, false
	}
	i, ok := x.other[id]
	return i, ok
}

// entryPrint identifies an entry's message without reading its content: its
// id and its parts' backing array. Equal prints mean the same message values,
// unless a policy wrote into the parts in place.
type entryPrint struct {
	id    string
	parts *agentstate.Part
	n     int
	mask  *agentstate.Mask
}

// of reports whether p is m's print; it is printOf(m) == p, field by field
// so that a long view costs no struct built and compared per entry (the
// check runs after every step of every call).
func (p *entryPrint) of(m *agentstate.Message) bool {
	if len(m.Parts) != p.n || m.Mask != p.mask || (p.n > 0 && &m.Parts[0] != p.parts) {
		return false
	}
	return m.ID == p.id
}

func printOf(m *agentstate.Message) entryPrint {
	p := entryPrint{id: m.ID, n: len(m.Parts), mask: m.Mask}
	if len(m.Parts) > 0 {
		p.parts = &m.Parts[0]
	}
	return p
}

// after checks the view after a step. A view with the same prints as the one
// last checked in full holds the same messages, so outside the compact stage
// (whose checks differ) it needs no second full check: the common case of a
// projection or isolation that keeps every message costs pointer comparisons
// only. A read-only stage must leave the view so; any other step that changed
// it is checked in full.
func (c *checker) after(w *policies.Work, s *step) error {
	compacts := s.stage.Info().Compacts
	// Inside one compaction point the compact stage's checks depend only on
	// the view: a step that left it as the last one checked there (a repair
	// with nothing to repair) passes them again.
	if c.checked != nil && (!compacts || c.checkedPoint == c.gen) && c.unchanged(w.Entries) {
		return nil
	}
	if s.stage.Info().ReadOnly && c.checked != nil {
		return fmt.Errorf("%w after %s: the %s stage changed the messages it may only read", agentstate.ErrInvariant, s.typ, s.stage)
	}
	if err := c.check(w, s); err != nil {
		return err
	}
	if cap(c.checked) < len(w.Entries) {
		c.checked = make([]entryPrint, 0, len(w.Entries))
	}
	c.checked = c.checked[:0]
	for i := range w.Entries {
		c.checked = append(c.checked, printOf(&w.Entries[i].Message))
	}
	c.checkedPoint = -1
	if compacts {
		c.checkedPoint = c.gen
	}
	return nil
}

// forget drops the record of the last full check, so that the next step is
// checked in full: the runner changed the view itself (a reverted transform).
func (c *checker) forget() {
	if c != nil {
		c.checked = nil
	}
}

func (c *checker) unchanged(entries []agentstate.Entry) bool {
	if len(entries) != len(c.checked) {
		return false
	}
	checked := c.checked[:len(entries)]
	for i := range entries {
		if !checked[i].of(&entries[i].Message) {
			return false
		}
	}
	return true
}

// newChecker starts the checks on the normalized view entries, in the
// requested view.
func newChecker(entries []agentstate.Entry, view agentstate.View) *checker {
	c := &checker{pinned: map[string]agentstate.Message{}, failures: map[string]agentstate.Message{}, hints: map[string]int32{},
		reasoning: view != agentstate.ViewConversation}
	if i := policies.FirstTask(entries); i >= 0 {
		c.firstTask, c.hasFirst = entries[i].Message, true
		c.hints[c.firstTask.ID] = entries[i].LogPos
	}
	for i := range entries {
		if m := entries[i].Message; m.Pinned {
			c.pinned[m.ID] = m
			c.hints[m.ID] = entries[i].LogPos
		}
	}
	for _, i := range policies.UnresolvedFailures(entries) {
		c.failures[entries[i].Message.ID] = entries[i].Message
		c.hints[entries[i].Message.ID] = entries[i].LogPos
	}
	return c
}

func (c *checker) beginCompaction(w *policies.Work) {
	if c == nil {
		return
	}
	c.gen++
	c.recent, c.joined = nil, nil
	start := policies.RecentStart(w.Entries, w.RecentTurns())
	history := policies.TaskHistory(w.Entries, w.RecentTurns())
	prev := -1
	for i := start; i < len(w.Entries); i++ {
		if history.Contains(i) && !policies.IsTurnStart(&w.Entries[i].Message) {
			continue
		}
		c.recent = append(c.recent, w.Entries[i].Message)
		c.joined = append(c.joined, prev >= 0 && prev == i-1)
		c.hints[w.Entries[i].Message.ID] = w.Entries[i].LogPos
		prev = i
	}
	c.instruction = agentstate.Message{}
	if i := policies.Instruction(w.Entries); i >= 0 {
		c.instruction = w.Entries[i].Message
		c.hints[c.instruction.ID] = w.Entries[i].LogPos
	}
	c.running = nil
	if w.State().Execution.Running() && !w.HardLimitExceeded() {
		c.running = map[string]agentstate.Message{}
		for i := range w.Entries {
			if m := w.Entries[i].Message; m.ExecutionID != "" && m.ExecutionID == w.State().Execution.ID {
				c.running[m.ID] = m
				c.hints[m.ID] = w.Entries[i].LogPos
			}
		}
	}
	// The scope is asked only of the messages looked for.
	c.index.index(w.Entries, len(w.State().Context.Messages), w)
	c.scope = make(map[string]bool, len(c.hints))
	for id, hint := range c.hints {
		if _, ok := c.index.find(w, id, hint); ok {
			c.scope[id] = true
		}
	}
}

func (c *checker) check(w *policies.Work, s *step) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w after %s: %s", agentstate.ErrInvariant, s.typ, fmt.Sprintf(format, args...))
	}
	if id := c.index.index(w.Entries, len(w.State().Context.Messages), w); id != "" {
		return fail("message id %q appears twice", id)
	}
	find := func(id string) (int, bool) { return c.index.find(w, id, c.hints[id]) }
	running := ""
	if w.State().Execution.Running() {
		running = w.State().Execution.ID
	}
	if err := checkToolUnits(w.Entries, running); err != nil {
		return fail("%v", err)
	}
	compacting := s.stage.Info().Compacts
	inScope := func(id string) bool { return !compacting || c.scope == nil || c.scope[id] }
	if c.hasFirst && inScope(c.firstTask.ID) {
		i, ok := find(c.firstTask.ID)
		if !ok || !sameMessage(&w.Entries[i].Message, &c.firstTask) && !(w.HardLimitExceeded() && policies.ShrunkFrom(&w.Entries[i].Message, &c.firstTask)) {
			return fail("the first task %q was not preserved verbatim", c.firstTask.ID)
		}
	}
	for id, m := range c.pinned {
		if !c.reasoning && policies.IsToolTrace(&m) {
			continue // the conversation view shows no tool trace, pinned or not
		}
		if !inScope(id) {
			continue
		}
		i, ok := find(id)
		if !ok || !sameMessage(&w.Entries[i].Message, &m) {
			return fail("pinned message %q was not preserved verbatim", id)
		}
	}
	if c.reasoning {
		var named map[string]bool
		for id, m := range c.failures {
			if _, ok := find(id); ok || !inScope(id) {
				continue
			}
			if named == nil {
				named = namedFailures(w.Entries, c.failures)
			}
			if !named[id] {
				return fail("unresolved failure %q is no longer visible (not shown, and no summary in the view names it)", m.ID)
			}
		}
	}
	if compacting {
		at := -1
		for k := range c.recent {
			i, ok := find(c.recent[k].ID)
			if !ok || i <= at || (c.joined[k] && i != at+1) {
				return fail("the recency window (latest %d turns, but the running task's history) was not kept in order and contiguous at message %q", w.RecentTurns(), c.recent[k].ID)
			}
			if !sameMessage(&w.Entries[i].Message, &c.recent[k]) && !(w.HardLimitExceeded() && policies.ShrunkFrom(&w.Entries[i].Message, &c.recent[k])) {
				return fail("the recency window is not verbatim at message %q", c.recent[k].ID)
			}
			at = i
		}
		if id := c.instruction.ID; id != "" {
			if i, ok := find(id); !ok || !sameMessage(&w.Entries[i].Message, &c.instruction) && !(w.HardLimitExceeded() && policies.ShrunkFrom(&w.Entries[i].Message, &c.instruction)) {
				return fail("the user's instruction %q was not preserved verbatim", id)
			}
		}
		for id, m := range c.running {
			i, ok := find(id)
			if !ok || !sameMessage(&w.Entries[i].Message, &m) {
				return fail("message %q of the running execution was compacted", id)
			}
		}
	}
	return nil
}

// namedFailures returns the failures that a summary in the view covers and
// names (policies.NamesFailure).
func namedFailures(entries []agentstate.Entry, failures map[string]agentstate.Message) map[string]bool {
	named := map[string]bool{}
	for i := range entries {
		m := &entries[i].Message
		if m.Kind != agentstate.KindSummary {
			continue
		}
		text := m.Text()
		for _, id := range m.CoversMessageIDs {
			if f, ok := failures[id]; ok && policies.NamesFailure(text, &f) {
				named[id] = true
			}
		}
	}
	return named
}

// checkToolUnits: every tool result answers a call of the unit it is in, and
// every call outside the running execution (running, its id or "") has a
// result.
func checkToolUnits(entries []agentstate.Entry, running string) error {
	type call struct {
		id       string
		answered bool
	}
	var calls []call
	for u := range policies.EachUnit(entries) {
		head := &entries[u.Start].Message
		if head.Role == agentstate.RoleTool {
			return fmt.Errorf("tool message %q does not follow the call it answers", head.ID)
		}
		if u.Len() == 1 && !head.HasToolCalls() {
			continue
		}
		// Units hold a handful of calls: a slice beats a map here.
		calls = calls[:0]
		for _, p := range head.Parts {
			if p.Kind == agentstate.PartToolCall {
				calls = append(calls, call{id: p.ToolCall.ID})
			}
		}
		for i := u.Start + 1; i < u.End; i++ {
			for _, p := range entries[i].Message.Parts {
				if p.Kind != agentstate.PartToolResult {
					continue
				}
				k := 0
				for k < len(calls) && calls[k].id != p.ToolResult.ToolCallID {
					k++
				}
				if k == len(calls) {
					return fmt.Errorf("tool result for %q in message %q has no call", p.ToolResult.ToolCallID, entries[i].Message.ID)
				}
				calls[k].answered = true
			}
		}
		if running != "" && head.ExecutionID == running {
			continue
		}
		for _, c := range calls {
			if !c.answered {
				return fmt.Errorf("tool call %q in message %q has no result", c.id, head.ID)
			}
		}
	}
	return nil
}

// sameMessage compares what a provider would see of two messages.
func sameMessage(a, b *agentstate.Message) bool {
	if a.ID != b.ID || a.Role != b.Role || a.Kind != b.Kind || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i := range a.Parts {
		p, q := &a.Parts[i], &b.Parts[i]
		if p.Kind != q.Kind || p.Text != q.Text || p.ToolCall != q.ToolCall || p.ToolResult != q.ToolResult ||
			p.Image.Source != q.Image.Source || p.Image.URL != q.Image.URL || p.Image.MediaType != q.Image.MediaType ||
			!bytes.Equal(p.Image.Data, q.Image.Data) || p.Reasoning.Text != q.Reasoning.Text || !bytes.Equal(p.Reasoning.Signature, q.Reasoning.Signature) {
			return false
		}
	}
	return true
}

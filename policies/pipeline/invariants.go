package pipeline

import (
	"bytes"
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
)

// checker enforces DESIGN.md's invariants after every step once the log has
// been normalized. A violation is a bug in a policy: the run fails with
// policies.ErrInvariant instead of returning a corrupt context.
type checker struct {
	firstTask policies.Message
	hasFirst  bool
	pinned    map[string]policies.Message
	failures  map[string]bool // unresolved failed results that must stay visible
	reasoning bool

	// Set at the start of the compact stage.
	recent  []policies.Message // the recency window, in order
	running map[string]policies.Message

	// byID is reused across steps: the check runs after every step and a
	// fresh map per step would dominate its cost on long logs.
	byID map[string]int
	// checked is the view as the last full check saw it.
	checked []entryPrint
}

// entryPrint identifies an entry's message without reading its content: its
// id and its parts' backing array. Equal prints mean the same message values,
// unless a policy wrote into the parts in place.
type entryPrint struct {
	id    string
	parts *policies.Part
	n     int
	mask  *policies.Mask
}

func printOf(m *policies.Message) entryPrint {
	p := entryPrint{id: m.ID, n: len(m.Parts), mask: m.Mask}
	if len(m.Parts) > 0 {
		p.parts = &m.Parts[0]
	}
	return p
}

// readOnly stages count, budget, decide or render: they read the view and
// never change a message.
func readOnly(s policies.Stage) bool {
	switch s {
	case policies.StageEstimate, policies.StageBudget, policies.StageDecide, policies.StageRender:
		return true
	}
	return false
}

// after checks the view after a step. A view with the same prints as the one
// last checked in full holds the same messages, so outside the compact stage
// (whose checks differ) it needs no second full check: the common case of a
// projection or isolation that keeps every message costs pointer comparisons
// only. A read-only stage must leave the view so; any other step that changed
// it is checked in full.
func (c *checker) after(w *policies.Work, s *step) error {
	if c.checked != nil && s.stage != policies.StageCompact && c.unchanged(w) {
		return nil
	}
	if readOnly(s.stage) && c.checked != nil {
		return fmt.Errorf("%w after %s: the %s stage changed the messages it may only read", policies.ErrInvariant, s.typ, s.stage)
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
	return nil
}

// forget drops the record of the last full check, so that the next step is
// checked in full: the runner changed the view itself (a reverted transform).
func (c *checker) forget() {
	if c != nil {
		c.checked = nil
	}
}

func (c *checker) unchanged(w *policies.Work) bool {
	if len(w.Entries) != len(c.checked) {
		return false
	}
	for i := range w.Entries {
		if printOf(&w.Entries[i].Message) != c.checked[i] {
			return false
		}
	}
	return true
}

func newChecker(w *policies.Work) *checker {
	c := &checker{pinned: map[string]policies.Message{}, failures: map[string]bool{}, reasoning: w.Options.View != policies.ViewConversation}
	if i := policies.FirstTask(w.Entries); i >= 0 {
		c.firstTask, c.hasFirst = w.Entries[i].Message, true
	}
	for i := range w.Entries {
		if m := w.Entries[i].Message; m.Pinned {
			c.pinned[m.ID] = m
		}
	}
	for _, i := range policies.UnresolvedFailures(w.Entries) {
		c.failures[w.Entries[i].Message.ID] = true
	}
	return c
}

func (c *checker) beginCompaction(w *policies.Work) {
	if c == nil {
		return
	}
	c.recent = nil
	for i := policies.RecentStart(w.Entries, w.RecentTurns); i < len(w.Entries); i++ {
		c.recent = append(c.recent, w.Entries[i].Message)
	}
	c.running = nil
	if w.State.Execution.Running() && !w.HardLimitExceeded {
		c.running = map[string]policies.Message{}
		for i := range w.Entries {
			if m := w.Entries[i].Message; m.ExecutionID != "" && m.ExecutionID == w.State.Execution.ID {
				c.running[m.ID] = m
			}
		}
	}
}

func (c *checker) check(w *policies.Work, s *step) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w after %s: %s", policies.ErrInvariant, s.typ, fmt.Sprintf(format, args...))
	}
	if c.byID == nil {
		c.byID = make(map[string]int, len(w.Entries))
	}
	clear(c.byID)
	byID := c.byID
	for i := range w.Entries {
		id := w.Entries[i].Message.ID
		if _, dup := byID[id]; dup {
			return fail("message id %q appears twice", id)
		}
		byID[id] = i
	}
	if err := checkToolUnits(w); err != nil {
		return fail("%v", err)
	}
	if c.hasFirst {
		i, ok := byID[c.firstTask.ID]
		if !ok || !sameMessage(&w.Entries[i].Message, &c.firstTask) {
			return fail("the first task %q was not preserved verbatim", c.firstTask.ID)
		}
	}
	for id, m := range c.pinned {
		if !c.reasoning && policies.IsToolTrace(&m) {
			continue // the conversation view shows no tool trace, pinned or not
		}
		i, ok := byID[id]
		if !ok || !sameMessage(&w.Entries[i].Message, &m) {
			return fail("pinned message %q was not preserved verbatim", id)
		}
	}
	if c.reasoning {
		for id := range c.failures {
			if _, ok := byID[id]; !ok {
				return fail("unresolved failure %q is no longer visible", id)
			}
		}
	}
	if s.stage == policies.StageCompact {
		if len(c.recent) > 0 {
			start, ok := byID[c.recent[0].ID]
			if !ok || start+len(c.recent) > len(w.Entries) {
				return fail("the recency window (latest %d turns) was not kept", w.RecentTurns)
			}
			for k := range c.recent {
				if !sameMessage(&w.Entries[start+k].Message, &c.recent[k]) {
					return fail("the recency window is not verbatim and contiguous at message %q", c.recent[k].ID)
				}
			}
		}
		for id, m := range c.running {
			i, ok := byID[id]
			if !ok || !sameMessage(&w.Entries[i].Message, &m) {
				return fail("message %q of the running execution was compacted", id)
			}
		}
	}
	return nil
}

// checkToolUnits: every tool result answers a call of the unit it is in, and
// every call outside the running execution has a result.
func checkToolUnits(w *policies.Work) error {
	running := ""
	if w.State.Execution.Running() {
		running = w.State.Execution.ID
	}
	type call struct {
		id       string
		answered bool
	}
	var calls []call
	for _, u := range policies.Units(w.Entries) {
		head := &w.Entries[u.Start].Message
		if head.Role == policies.RoleTool {
			return fmt.Errorf("tool message %q does not follow the call it answers", head.ID)
		}
		if u.Len() == 1 && !head.HasToolCalls() {
			continue
		}
		// Units hold a handful of calls: a slice beats a map here.
		calls = calls[:0]
		for _, p := range head.Parts {
			if p.Kind == policies.PartToolCall {
				calls = append(calls, call{id: p.ToolCall.ID})
			}
		}
		for i := u.Start + 1; i < u.End; i++ {
			for _, p := range w.Entries[i].Message.Parts {
				if p.Kind != policies.PartToolResult {
					continue
				}
				k := 0
				for k < len(calls) && calls[k].id != p.ToolResult.ToolCallID {
					k++
				}
				if k == len(calls) {
					return fmt.Errorf("tool result for %q in message %q has no call", p.ToolResult.ToolCallID, w.Entries[i].Message.ID)
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
func sameMessage(a, b *policies.Message) bool {
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

package policies

// Protection marks the entries that compaction must keep verbatim (DESIGN.md
// invariants 1-6): the first task, pinned messages, the latest w.RecentTurns
// turns, unresolved failures, and the running execution's trace unless the hard
// window is exceeded. A mark on any entry of a tool unit marks the whole unit.
// The result is aligned with w.Entries at the time of the call.
func Protection(w *Work) []bool {
	n := len(w.Entries)
	protected := make([]bool, n)
	if first := FirstTask(w.Entries); first >= 0 {
		protected[first] = true
	}
	for i := RecentStart(w.Entries, w.RecentTurns); i < n; i++ {
		protected[i] = true
	}
	running := w.State != nil && w.State.Execution.Running() && !w.HardLimitExceeded
	for i := range w.Entries {
		m := &w.Entries[i].Message
		if m.Pinned || (running && m.ExecutionID != "" && m.ExecutionID == w.State.Execution.ID) {
			protected[i] = true
		}
	}
	for _, i := range UnresolvedFailures(w.Entries) {
		protected[i] = true
	}
	for _, u := range Units(w.Entries) {
		any := false
		for i := u.Start; i < u.End; i++ {
			any = any || protected[i]
		}
		if any {
			for i := u.Start; i < u.End; i++ {
				protected[i] = true
			}
		}
	}
	return protected
}

// UnresolvedFailures returns the indexes of tool messages holding a failed
// result that no later successful result of the same tool resolves.
func UnresolvedFailures(entries []Entry) []int {
	resolved := make(map[string]bool)
	var out []int
	for i := len(entries) - 1; i >= 0; i-- {
		m := &entries[i].Message
		if m.Role != RoleTool {
			continue
		}
		failed := false
		for _, p := range m.Parts {
			if p.Kind != PartToolResult {
				continue
			}
			if p.ToolResult.IsError {
				if !resolved[p.ToolResult.Name] {
					failed = true
				}
			}
		}
		for _, p := range m.Parts {
			if p.Kind == PartToolResult && !p.ToolResult.IsError {
				resolved[p.ToolResult.Name] = true
			}
		}
		if failed {
			out = append(out, i)
		}
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// RepairPass marks a compact-stage policy that runs after the transforms whenever
// any of them changed the view, even when the target is already met.
type RepairPass interface {
	RepairPass()
}

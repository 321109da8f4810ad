package pipeline

import (
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// report assembles the run's report: per-message dispositions in log order and
// the first output index that differs from the log.
func (r *runner) report() policies.Report {
	w := r.w
	log := w.State().Context.Messages
	verbatim, stable := prefixes(w.Entries, &w.State().Context)
	// The log messages of the verbatim prefix are the first entries, in
	// order and unchanged: a report that leaves them out starts after them.
	from := 0
	if r.reportFromVerbatim {
		from = verbatim
		if w.State().Context.SystemPrompt != "" {
			from--
		}
		from = min(max(from, 0), len(log))
	}
	shown := shownEntries{entries: w.Entries, next: from}
	msgs := make([]policies.MessageReport, 0, len(log)-from)
	for k := from; k < len(log); k++ {
		m := &log[k]
		i, ok := shown.find(m.ID)
		if d, disposed := w.DispositionAt(k); disposed {
			if ok {
				d.Tokens, d.Provenance = w.Entries[i].Tokens, w.Entries[i].Provenance
			}
			msgs = append(msgs, d)
			continue
		}
		switch {
		case !ok:
			msgs = append(msgs, policies.MessageReport{MessageID: m.ID, Disposition: policies.DispositionDropped, Reason: "not in the view"})
		case w.Entries[i].Changed:
			msgs = append(msgs, policies.MessageReport{MessageID: m.ID, Disposition: policies.DispositionRepaired, Tokens: w.Entries[i].Tokens, Provenance: w.Entries[i].Provenance})
		default:
			msgs = append(msgs, policies.MessageReport{MessageID: m.ID, Disposition: policies.DispositionKept, Tokens: w.Entries[i].Tokens, Provenance: w.Entries[i].Provenance})
		}
	}
	// The policies wrote their part (repairs, warnings, helper models); the
	// runner's is the rest.
	rep := w.Report()
	for _, u := range rep.ModelUsage {
		rep.TotalCostUSD += u.CostUSD
	}
	rep.Profile = r.p.info.Name
	rep.Stages = r.stages
	rep.Messages = msgs
	rep.OmittedMessageReports = from
	rep.FirstChangedIndex, rep.VerbatimPrefix = stable, verbatim
	rep.Compacted = r.compacted
	rep.Compaction = r.compactionReport()
	return rep
}

// compactionReport is the schedule's report with the reached size.
func (r *runner) compactionReport() policies.CompactionReport {
	c := r.compaction
	if r.counted {
		c.ReachedTokens = r.w.UsedTokens()
	}
	return c
}

// prefixes returns, as indexes in the compiled output (system prompt at 0
// when set), the end of the verbatim prefix (the first message that is not
// the log's message at the same place, unchanged) and the end of the stable
// prefix (the first Unsettled entry: what later compiles of the log, grown by
// appends, may show differently). c is the request's context: its system
// prompt and its log.
func prefixes(entries []agentstate.Entry, c *agentstate.Context) (verbatim, stable int) {
	offset := 0
	if c.SystemPrompt != "" {
		offset = 1
	}
	log := c.Messages
	verbatim, stable = -1, -1
	for i := range entries {
		e := &entries[i]
		if verbatim < 0 && (i >= len(log) || e.SourceID != log[i].ID || e.Changed) {
			verbatim = i + offset
		}
		if e.Unsettled {
			stable = i + offset
			break
		}
	}
	if stable < 0 {
		stable = len(entries) + offset
	}
	if verbatim < 0 {
		verbatim = stable
	}
	return min(verbatim, stable), stable
}

// shownEntries finds the first entry that shows a log message (SourceID).
// Views keep log order, so asked in log order the answer is nearly always the
// entry after the last one found; a map is built only when a view reordered
// or dropped something.
type shownEntries struct {
	entries []agentstate.Entry
	next    int
	byID    map[string]int
}

func (s *shownEntries) find(id string) (int, bool) {
	for s.next < len(s.entries) && s.entries[s.next].SourceID == "" {
		s.next++
	}
	if s.next < len(s.entries) && s.entries[s.next].SourceID == id {
		s.next++
		return s.next - 1, true
	}
	if s.byID == nil {
		s.byID = make(map[string]int, len(s.entries))
		for i := range s.entries {
			if src := s.entries[i].SourceID; src != "" {
				if _, dup := s.byID[src]; !dup {
					s.byID[src] = i
				}
			}
		}
	}
	i, ok := s.byID[id]
	return i, ok
}

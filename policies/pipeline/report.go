package pipeline

import "github.com/contextcompiler/ctxc/policies"

// report assembles the run's report: per-message dispositions in log order and
// the first output index that differs from the log.
func (r *runner) report() policies.Report {
	w := r.w
	log := w.State.Context.Messages
	shown := shownEntries{entries: w.Entries}
	msgs := make([]policies.MessageReport, 0, len(log))
	for _, m := range log {
		i, ok := shown.find(m.ID)
		if d, disposed := w.Dispositions[m.ID]; disposed {
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
	first := firstChanged(w)
	cost := 0.0
	for _, u := range w.ModelUsage {
		cost += u.CostUSD
	}
	return policies.Report{
		PlanningUsed:      w.PlanningUsed,
		Artifacts:         w.Artifacts,
		ModelUsage:        w.ModelUsage,
		Cache:             w.Cache,
		TotalCostUSD:      cost,
		Profile:           r.p.info.Name,
		Stages:            r.stages,
		Messages:          msgs,
		Repairs:           w.Repairs,
		Warnings:          w.Warnings,
		FirstChangedIndex: first,
		Compacted:         r.compacted,
	}
}

// firstChanged is the index in the compiled output (system prompt at 0 when
// set) of the first message that is not the log's message at the same place.
func firstChanged(w *policies.Work) int {
	offset := 0
	if w.State.Context.SystemPrompt != "" {
		offset = 1
	}
	log := w.State.Context.Messages
	for i := range w.Entries {
		e := &w.Entries[i]
		if i >= len(log) || e.SourceID != log[i].ID || e.Changed {
			return i + offset
		}
	}
	return len(w.Entries) + offset
}

// shownEntries finds the first entry that shows a log message (SourceID).
// Views keep log order, so asked in log order the answer is nearly always the
// entry after the last one found; a map is built only when a view reordered
// or dropped something.
type shownEntries struct {
	entries []policies.Entry
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

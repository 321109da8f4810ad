package pipeline

import (
	"context"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// CompactResult is the outcome of persisting compaction into a state.
type CompactResult struct {
	// State is the input state with summaries appended to the log and masks
	// recorded on the messages they hide.
	State *agentstate.State
	// Before and After are the budgets before and after compaction.
	Before, After *agentstate.Budget
	// Report explains the run.
	Report policies.Report
}

// Compact runs a profile through its compact stage and persists what it did
// into a new state, so later compiles reuse the work: summaries are appended to
// the log (they record what they cover), masks are recorded on the messages they
// hide. Nothing is deleted from the log unless the profile sets bounded_log.
func (c *Catalog) Compact(ctx context.Context, req Request) (*CompactResult, error) {
	req.Segment = SegmentCompact
	res, err := c.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	p, _ := c.lookup(req.Profile)
	w := res.Work
	return &CompactResult{State: persist(req.State, w.Appended, w.Masks, p.info.BoundedLog), Before: res.BudgetBefore, After: w.Budget, Report: res.Report}, nil
}

// persist returns a copy of in with a run's summaries (appended) appended
// and its masks recorded.
func persist(in *agentstate.State, appended []agentstate.Message, masks map[string]agentstate.Mask, bounded bool) *agentstate.State {
	st := *in
	log := make([]agentstate.Message, 0, len(st.Context.Messages)+len(appended))
	covered := map[string]bool{}
	if bounded {
		for _, s := range appended {
			for _, id := range s.CoversMessageIDs {
				covered[id] = true
			}
		}
	}
	for _, m := range st.Context.Messages {
		if covered[m.ID] {
			continue
		}
		if mask, ok := masks[m.ID]; ok && m.Mask == nil {
			mask := mask
			m.Mask = &mask
		}
		log = append(log, m)
	}
	log = append(log, appended...)
	st.Context.Messages = log
	return &st
}

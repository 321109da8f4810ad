package compaction

import (
	"context"
	"fmt"
	"sort"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Default importance scores, documented in DropLowImportanceConfig: the
// agent's work (tool calls with their results, and the decisions that close
// turns) scores above the default threshold, so it outlives chatter.
const (
	scoreSummary       = 90
	scoreFailedResult  = 80
	scoreUser          = 70
	scoreDecision      = 65
	scoreToolCalls     = 60
	scoreEvent         = 50
	scoreAssistantText = 30
	scoreRepair        = 30
	scoreResult        = 20
	scoreReasoningOnly = 10
)

// dropLowImportance is the "drop_low_importance" policy: whole
// units scoring below the threshold are dropped, lowest first, oldest first
// among equals, until the target is met.
type dropLowImportance struct {
	cfg DropLowImportanceConfig
}

// Replayable: dropping reads only the view.
func (dropLowImportance) Replayable() bool { return true }

func (d dropLowImportance) Apply(_ context.Context, w *policies.Work) error {
	protected := policies.Protection(w)
	// The newest KeepRecentMessages entries stay, beside the profile's recency window.
	recent := len(w.Entries) - d.cfg.KeepRecentMessages
	type candidate struct {
		unit  policies.Span
		score int
	}
	var candidates []candidate
	for _, u := range policies.Units(w.Entries) {
		if protected[u.Start] || u.End > recent {
			continue
		}
		score := 0
		for i := u.Start; i < u.End; i++ {
			score = max(score, importance(w.Entries, i))
		}
		if score < d.cfg.MinImportanceThreshold {
			candidates = append(candidates, candidate{u, score})
		}
	}
	// Units come oldest first; a stable sort keeps that order among equal scores.
	sort.SliceStable(candidates, func(a, b int) bool { return candidates[a].score < candidates[b].score })
	goal := target(w)
	used := w.UsedTokens()
	drop := make([]bool, len(w.Entries))
	dropped := 0
	for _, c := range candidates {
		if used <= goal {
			break
		}
		used -= unitTokens(w.Entries, c.unit)
		for i := c.unit.Start; i < c.unit.End; i++ {
			drop[i] = true
			dropped++
			dispose(w, &w.Entries[i], policies.DispositionDropped, TypeDropLowImportance,
				fmt.Sprintf("importance %d below %d", c.score, d.cfg.MinImportanceThreshold))
		}
	}
	if dropped > 0 {
		w.Entries = removeEntries(w.Entries, drop)
	}
	return nil
}

// importance scores entry i: its explicit Importance when set, else the
// documented table.
func importance(entries []agentstate.Entry, i int) int {
	m := &entries[i].Message
	if m.Importance > 0 {
		return int(min(m.Importance, 100))
	}
	switch m.Kind {
	case agentstate.KindSummary:
		return scoreSummary
	case agentstate.KindEvent:
		return scoreEvent
	case agentstate.KindRepair, agentstate.KindPlaceholder:
		return scoreRepair
	}
	switch m.Role {
	case agentstate.RoleUser, agentstate.RoleSystem:
		return scoreUser
	case agentstate.RoleTool:
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolResult && p.ToolResult.IsError {
				return scoreFailedResult
			}
		}
		return scoreResult
	case agentstate.RoleAssistant:
		if m.HasToolCalls() {
			return scoreToolCalls
		}
		text := false
		for _, p := range m.Parts {
			text = text || (p.Kind == agentstate.PartText && p.Text != "")
		}
		switch {
		case !text:
			return scoreReasoningOnly
		case closesTurn(entries, i):
			return scoreDecision
		default:
			return scoreAssistantText
		}
	}
	return scoreAssistantText
}

// closesTurn reports whether no assistant message follows entry i before the
// next turn starts: its text is the turn's answer.
func closesTurn(entries []agentstate.Entry, i int) bool {
	for k := i + 1; k < len(entries); k++ {
		m := &entries[k].Message
		if policies.IsTurnStart(m) {
			return true
		}
		if m.Role == agentstate.RoleAssistant {
			return false
		}
	}
	return true
}

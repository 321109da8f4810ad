package budget

import (
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Compute returns the budget of w from its counted entries and preamble; the
// runner calls it again after compaction transforms. It reads only w.
//
//   - ContextWindow: w.Model.ContextWindow, capped by the MaxContextTokens option.
//   - ReservedOutput: the ReservedOutputTokens option, else the model's max
//     output, capped at cfg.MaxReservedOutputRatio of the window.
//   - SoftThreshold: the ratio (option, else cfg) of window - ReservedOutput.
//   - Used: anchored when possible (see anchor), else the preamble plus every
//     entry's count, EXACT when every entry count is exact, else ESTIMATED.
//   - Remaining: window - Used - ReservedOutput, never negative.
//   - OverSoftThreshold: Used >= SoftThreshold (the soft threshold reached).
//   - ShouldCompact: the soft threshold reached, or Remaining <
//     MinHeadroomTokens; the runner replaces it with the profile trigger's
//     verdict when the profile has one.
//   - Breakdown: the preamble and the entries' own counts by kind (pinned,
//     summaries, tool trace, conversation); under anchoring it explains the
//     estimate, so it may differ from Used.
func Compute(w *policies.Work, cfg *Config) agentstate.Budget {
	window := w.Model().ContextWindow
	if m := w.Options().MaxContextTokens; m != nil && *m > 0 && (window <= 0 || int(*m) < window) {
		window = int(*m)
	}
	window = max(window, 0)

	reserved := w.Model().MaxOutputTokens
	if r := w.Options().ReservedOutputTokens; r != nil {
		reserved = int(*r)
	}
	if limit := int(cfg.MaxReservedOutputRatio * float64(window)); reserved > limit {
		reserved = limit
	}
	reserved = max(reserved, 0)

	ratio := cfg.SoftThresholdRatio
	if r := w.Options().SoftThresholdRatio; r != nil && *r > 0 && *r <= 1 {
		ratio = *r
	}

	b := agentstate.Budget{
		ContextWindow:  window,
		ReservedOutput: reserved,
		ReservedSystem: w.SystemTokens + w.ToolTokens,
		SoftThreshold:  int(ratio * float64(window-reserved)),
		MinHeadroom:    cfg.MinHeadroomTokens,
		Breakdown:      breakdown(w.Entries, w.SystemTokens, w.ToolTokens),
	}
	if w.Counter() != nil {
		b.Counter = w.Counter().Name()
	}

	var log []agentstate.Message
	if w.State() != nil {
		log = w.State().Context.Messages
	}
	if a := anchor(w.Entries, log); a >= 0 {
		b.Used = w.Entries[a].Message.Usage.Total()
		for i := a + 1; i < len(w.Entries); i++ {
			b.Used += w.Entries[i].Tokens
		}
		b.Provenance = agentstate.ProvenanceAnchored
	} else {
		b.Used = w.SystemTokens + w.ToolTokens
		b.Provenance = agentstate.ProvenanceExact
		for i := range w.Entries {
			b.Used += w.Entries[i].Tokens
			if w.Entries[i].Provenance != agentstate.ProvenanceExact {
				b.Provenance = agentstate.ProvenanceEstimated
			}
		}
	}

	b.Remaining = max(window-b.Used-reserved, 0)
	b.OverSoftThreshold = b.Used >= b.SoftThreshold
	b.ShouldCompact = b.OverSoftThreshold || b.Remaining < b.MinHeadroom
	return b
}

// anchor returns the index of the newest assistant entry that carries
// provider usage and whose prefix (it and every entry before it) is exactly
// the log's prefix, unchanged; -1 when there is none. Its usage counts the
// whole prompt the provider saw plus that reply, so only later entries need
// estimates; earlier usages are never added. log is the request's.
func anchor(entries []agentstate.Entry, log []agentstate.Message) int {
	prefix := 0 // entries [0, prefix) show the log verbatim
	for prefix < len(entries) && prefix < len(log) {
		e := &entries[prefix]
		if e.Changed || e.SourceID == "" || e.SourceID != log[prefix].ID {
			break
		}
		prefix++
	}
	for i := prefix - 1; i >= 0; i-- {
		m := &entries[i].Message
		if m.Role == agentstate.RoleAssistant && m.Usage != nil && m.Usage.Total() > 0 {
			return i
		}
	}
	return -1
}

// breakdown splits the preamble's and the entries' counts by kind.
func breakdown(entries []agentstate.Entry, systemTokens, toolTokens int) agentstate.Breakdown {
	b := agentstate.Breakdown{SystemPrompt: systemTokens, Tools: toolTokens}
	for i := range entries {
		e := &entries[i]
		switch m := &e.Message; {
		case m.Pinned:
			b.Pinned += e.Tokens
		case m.Kind == agentstate.KindSummary:
			b.Summaries += e.Tokens
		case policies.IsToolTrace(m):
			b.ToolTrace += e.Tokens
		default:
			b.Conversation += e.Tokens
		}
	}
	return b
}

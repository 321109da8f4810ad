package compaction

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// clamp is the "clamp" policy: every text part and tool result content larger
// than max_part_tokens keeps its head and tail with a marker in between.
// Summaries are never cut: summarize budgets them.
type clamp struct {
	cfg ClampConfig
}

// InPlaceEdit: clamping cuts parts and keeps every message.
func (clamp) InPlaceEdit() {}

// Replayable: clamping reads only the view.
func (clamp) Replayable() bool { return true }

func (c clamp) Apply(_ context.Context, w *policies.Work) error {
	protected := policies.Protection(w)
	for i := range w.Entries {
		e := &w.Entries[i]
		if protected[i] || e.Message.Mask != nil {
			continue // a masked message shows its placeholder, not its parts
		}
		if e.Message.Kind == agentstate.KindSummary && e.Message.Role != agentstate.RoleTool {
			// A summary was written to its budget, facts first; cutting out
			// its middle would drop whole sections without a word.
			continue
		}
		cut, copied := 0, false
		for j := range e.Message.Parts {
			p := &e.Message.Parts[j]
			var s *string
			switch p.Kind {
			case agentstate.PartText:
				s = &p.Text
			case agentstate.PartToolResult:
				s = &p.ToolResult.Content
			default:
				continue // tool call JSON and signed reasoning must stay whole
			}
			tokens := w.Counter().CountText(*s)
			if tokens <= c.cfg.MaxPartTokens {
				continue
			}
			if !copied {
				copyParts(&e.Message)
				copied = true
				p = &e.Message.Parts[j]
				if p.Kind == agentstate.PartText {
					s = &p.Text
				} else {
					s = &p.ToolResult.Content
				}
			}
			*s = c.clampText(w.Counter(), *s, tokens, logID(e))
			cut++
		}
		if cut > 0 {
			w.Touch(i)
			dispose(w, e, policies.DispositionTruncated, TypeClamp,
				fmt.Sprintf("%d part(s) over %s tokens cut to head and tail", cut, formatCount(c.cfg.MaxPartTokens)))
		}
	}
	return nil
}

// clampText keeps a head and a tail of s worth max_part_tokens in all. Sizes
// come from the part's own bytes-per-token ratio, so the cost is linear in s.
func (c clamp) clampText(counter agentstate.TokenCounter, s string, tokens int, id string) string {
	bytesPerToken := float64(len(s)) / float64(tokens)
	headBytes := int(float64(c.cfg.MaxPartTokens) * c.cfg.HeadRatio * bytesPerToken)
	tailBytes := int(float64(c.cfg.MaxPartTokens) * (1 - c.cfg.HeadRatio) * bytesPerToken)
	head := runePrefix(s, headBytes)
	tail := runeSuffix(s[len(head):], tailBytes)
	middle := s[len(head) : len(s)-len(tail)]
	marker := fmt.Sprintf("\n[... %s tokens cut by ctxc clamp; full content in log message %s ...]\n",
		formatCount(counter.CountText(middle)), id)
	return head + marker + tail
}

// runePrefix is the longest prefix of s of at most n bytes ending on a rune boundary.
func runePrefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// runeSuffix is the longest suffix of s of at most n bytes starting on a rune boundary.
func runeSuffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

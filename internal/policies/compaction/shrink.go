package compaction

import (
	"fmt"
	"slices"
	"strings"

	"github.com/contextcompiler/ctxc/internal/agentstate"
	"github.com/contextcompiler/ctxc/internal/policies"
)

// Shrinking what is protected: when the window cannot hold the system
// prompt, the tools and every protected message, the protected tool outputs
// (the running execution's, the latest turns') are cut to a head and a tail,
// the largest first and the newest last, before the call is refused. What
// is never cut: the system prompt, the tools, pinned messages, the first
// task, and every message that is not a tool output (the user's words, the
// assistant's calls). docs/ARCHITECTURE.md, "Invariants".

// shrinkFloor is the least a shrunk output keeps, in tokens.
const shrinkFloor = 300

// shrinkMarker opens the note that replaces an output's middle; the
// invariant checker recognizes a shrunk output by it.
const shrinkMarker = policies.ShrinkMarker

// shrinkProtected cuts protected tool outputs until preamble and the
// protected entries fit the hard limit; it returns the tokens the protected
// entries take after it, and whether they fit.
func shrinkProtected(w *policies.Work, protected []bool, preamble, protectedTokens int) (int, bool) {
	type cand struct{ i, j, tokens int }
	var cands []cand
	lastTool := -1
	for i := range w.Entries {
		if protected[i] && w.Entries[i].Message.Role == agentstate.RoleTool {
			lastTool = i
		}
	}
	for i := range w.Entries {
		m := &w.Entries[i].Message
		if !protected[i] || m.Pinned || m.Role != agentstate.RoleTool || m.Mask != nil {
			continue
		}
		for j, p := range m.Parts {
			if p.Kind == agentstate.PartToolResult && !strings.Contains(p.ToolResult.Content, shrinkMarker) {
				if t := w.Counter().CountText(p.ToolResult.Content); t > shrinkFloor {
					cands = append(cands, cand{i, j, t})
				}
			}
		}
	}
	// The largest first; the newest output (what the model answers next)
	// last of all.
	slices.SortStableFunc(cands, func(a, b cand) int {
		if (a.i == lastTool) != (b.i == lastTool) {
			if a.i == lastTool {
				return 1
			}
			return -1
		}
		return b.tokens - a.tokens
	})
	over := preamble + protectedTokens - w.HardLimit()
	for _, c := range cands {
		if over <= 0 {
			break
		}
		e := &w.Entries[c.i]
		keep := max(shrinkFloor, c.tokens-over-shrinkMarkerTokens)
		if keep >= c.tokens {
			continue
		}
		before := e.Tokens
		copyParts(&e.Message)
		r := &e.Message.Parts[c.j].ToolResult
		full := r.Content
		// The head and tail are sized by the output's average bytes per
		// token, so the cut can fall a little short: this output is cut
		// further, not the next one (a smaller, older output would lose its
		// middle, where its failure is named, for a few tokens).
		for range maxShrinkTries {
			r.Content = shrinkText(full, c.tokens, keep, logID(e))
			e.Tokens, _ = w.Counter().CountMessage(&e.Message)
			short := over - (before - e.Tokens)
			if short <= 0 || keep == shrinkFloor {
				break
			}
			keep = max(shrinkFloor, keep-short-shrinkSlack)
		}
		w.Touch(c.i)
		over -= before - e.Tokens
		protectedTokens -= before - e.Tokens
		dispose(w, e, policies.DispositionTruncated, TypeTruncate,
			fmt.Sprintf("a protected output of %s tokens cut to %s: the window could not hold every protected message", formatCount(c.tokens), formatCount(keep)))
		w.Warn(fmt.Sprintf("cut tool output %s (call %s) from %s to about %s tokens to fit the window; the full output stays in the log",
			logID(e), r.ToolCallID, formatCount(c.tokens), formatCount(keep)))
	}
	return protectedTokens, over <= 0
}

// maxShrinkTries bounds the cuts of one output that make it fit, and
// shrinkSlack is what each try after the first cuts beyond what the last
// fell short by (a cut's edges round to whole tokens).
const (
	maxShrinkTries = 4
	shrinkSlack    = 8
)

// shrinkMarkerTokens is what the marker itself costs, about.
const shrinkMarkerTokens = 40

// shrinkText keeps a head (three fifths) and a tail of s worth keep tokens,
// with a note in between saying what was cut and where the rest is.
func shrinkText(s string, tokens, keep int, id string) string {
	bytesPerToken := float64(len(s)) / float64(tokens)
	head := runePrefix(s, int(float64(keep)*0.6*bytesPerToken))
	tail := runeSuffix(s[len(head):], int(float64(keep)*0.4*bytesPerToken))
	return head + fmt.Sprintf("\n%s %s of %s tokens from the middle of this output to fit the window; the full output is log message %s: call the tool again to see it]\n",
		shrinkMarker, formatCount(tokens-keep), formatCount(tokens), id) + tail
}

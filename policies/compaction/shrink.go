package compaction

import (
	"fmt"
	"slices"
	"strings"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
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
// protected entries fit limit; it returns the tokens the protected entries
// take after it, and whether they fit. Each cut keeps the lines that say what
// failed (outputs reads them), wherever they sit.
func shrinkProtected(w *policies.Work, protected []bool, preamble, protectedTokens, limit int, outputs *diagnose.Cache) (int, bool) {
	// tokens is what the output takes now, full its content before any cut
	// (read from the log for one cut earlier in the run) and fullTokens that.
	type cand struct {
		i, j, tokens, fullTokens int
		full                     string
	}
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
			if p.Kind != agentstate.PartToolResult {
				continue
			}
			c := cand{i: i, j: j, full: p.ToolResult.Content}
			c.tokens = w.Counter().CountText(c.full)
			c.fullTokens = c.tokens
			if strings.Contains(c.full, shrinkMarker) {
				// Cut once already (the note of a truncation did not fit
				// beside it): cut again, further, from the output as it was.
				full, ok := w.LogToolResult(w.Entries[i].SourceID, p.ToolResult.ToolCallID)
				if !ok {
					continue
				}
				c.full, c.fullTokens = full, w.Counter().CountText(full)
			}
			if c.tokens > shrinkFloor {
				cands = append(cands, c)
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
	over := preamble + protectedTokens - limit
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
		full := c.full
		evidence := outputs.Read(full).Evidence(r.IsError, maxEvidenceLines)
		keep = cutToFit(w.Counter(), e, keep, over, func(keep int) { r.Content = shrinkText(full, c.fullTokens, keep, logID(e), evidence) })
		w.Touch(c.i)
		over -= before - e.Tokens
		protectedTokens -= before - e.Tokens
		dispose(w, e, policies.DispositionTruncated, TypeTruncate,
			fmt.Sprintf("a protected output of %s tokens cut to %s: the window could not hold every protected message", formatCount(c.fullTokens), formatCount(keep)))
		w.Warn(fmt.Sprintf("cut tool output %s (call %s) from %s to about %s tokens to fit the window; the full output stays in the log",
			logID(e), r.ToolCallID, formatCount(c.fullTokens), formatCount(keep)))
	}
	return protectedTokens, over <= 0
}

// cutToFit cuts e (cut writes the cut of its content keeping keep tokens)
// until it has shed over tokens or keeps no more than shrinkFloor, and
// returns what it keeps. The head and tail of a cut are sized by the text's
// average bytes per token, so the cut can fall a little short: the same text
// is cut further, not the next one (a smaller, older output would lose its
// middle, where its failure is named, for a few tokens).
func cutToFit(counter agentstate.TokenCounter, e *agentstate.Entry, keep, over int, cut func(keep int)) int {
	before := e.Tokens
	for range maxShrinkTries {
		cut(keep)
		e.Tokens, _ = counter.CountMessage(&e.Message)
		short := over - (before - e.Tokens)
		if short <= 0 || keep == shrinkFloor {
			break
		}
		keep = max(shrinkFloor, keep-short-shrinkSlack)
	}
	return keep
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

// maxEvidenceLines bounds the lines a cut keeps from the middle of an
// output beside its head and tail.
const maxEvidenceLines = 24

// shrinkText keeps a head (three fifths) and a tail of s worth keep tokens,
// cut on line boundaries, and from the middle the lines that say what failed
// (evidence, the output's own trimmed lines), with a note where the cut is
// saying what was cut and where the rest is.
func shrinkText(s string, tokens, keep int, id string, evidence []string) string {
	kept := ""
	if len(evidence) > 0 {
		kept = ", keeping the lines that say what failed"
	}
	return cutText(s, tokens, keep, 3.0/5, evidence, fmt.Sprintf("%s %s of %s tokens from this output to fit the window%s; the full output is log message %s: call the tool again to see it]",
		shrinkMarker, formatCount(tokens-keep), formatCount(tokens), kept, id))
}

// cutText keeps of s (tokens long) keep tokens: a head (headShare of them)
// and a tail, on line boundaries, and from the middle the evidence lines (the
// text's own trimmed lines), paid for out of the head and tail but never more
// than half of keep; note (one line) marks the cut.
func cutText(s string, tokens, keep int, headShare float64, evidence []string, note string) string {
	bytesPerToken := float64(len(s)) / float64(tokens)
	budget := int(float64(keep) * bytesPerToken)
	lines := strings.SplitAfter(s, "\n")
	want := make(map[string]bool, len(evidence))
	for _, l := range evidence {
		want[l] = true
	}
	var middle []int
	spent := 0
	for i, l := range lines {
		if want[strings.TrimSpace(l)] && spent+len(l) <= budget/2 {
			middle = append(middle, i)
			spent += len(l)
			delete(want, strings.TrimSpace(l)) // a repeated line is kept once
		}
	}
	room := budget - spent
	headBytes := int(float64(room) * headShare)
	tailBytes := room - headBytes
	// The head: whole lines while they fit, else a cut inside the first.
	head, used := 0, 0
	for head < len(lines) && used+len(lines[head]) <= headBytes {
		used += len(lines[head])
		head++
	}
	headText := strings.Join(lines[:head], "")
	if head == 0 {
		headText = runePrefix(s, headBytes)
	}
	tail, used := len(lines), 0
	for tail > head && used+len(lines[tail-1]) <= tailBytes {
		used += len(lines[tail-1])
		tail--
	}
	tailText := strings.Join(lines[tail:], "")
	if tail == len(lines) && head < len(lines) {
		tailText = runeSuffix(s[len(headText):], tailBytes)
	}
	var b strings.Builder
	b.WriteString(headText)
	if !strings.HasSuffix(headText, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(note)
	b.WriteByte('\n')
	last := head - 1
	for _, i := range middle {
		if i <= last || i >= tail {
			continue // in the head or the tail already
		}
		if i > last+1 && last >= head {
			b.WriteString("[…]\n")
		}
		b.WriteString(lines[i])
		if !strings.HasSuffix(lines[i], "\n") {
			b.WriteByte('\n')
		}
		last = i
	}
	if last >= head && tail > last+1 {
		b.WriteString("[…]\n")
	}
	b.WriteString(tailText)
	return b.String()
}

// shrinkUserText cuts the middle of protected user messages that alone take
// more than a quarter of limit, the largest first, until preamble and the
// protected entries fit limit: an agent CLI that compacts its own history
// sends the whole transcript in one user message with its instruction
// ("summarize the conversation above") at the end, which no window of the
// model's size holds. The head (where the task and its rules were said) and
// the tail (the newest work and the instruction) stay, with the lines that
// say what failed. It returns the tokens the protected entries take after
// it, and whether they fit; it is the last cut before a refusal.
func shrinkUserText(w *policies.Work, protected []bool, preamble, protectedTokens, limit int, outputs *diagnose.Cache) (int, bool) {
	type cand struct{ i, j, tokens int }
	var cands []cand
	for i := range w.Entries {
		m := &w.Entries[i].Message
		if !protected[i] || m.Pinned || !policies.IsTurnStart(m) {
			continue // a person's or a CLI's message, not a summary or an event
		}
		for j, p := range m.Parts {
			if p.Kind != agentstate.PartText || strings.Contains(p.Text, shrinkMarker) {
				continue
			}
			if t := w.Counter().CountText(p.Text); t > limit/4 && t > shrinkFloor {
				cands = append(cands, cand{i, j, t})
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return b.tokens - a.tokens })
	over := preamble + protectedTokens - limit
	for _, c := range cands {
		if over <= 0 {
			break
		}
		e := &w.Entries[c.i]
		keep := max(shrinkFloor, c.tokens-over-shrinkMarkerTokens)
		before := e.Tokens
		copyParts(&e.Message)
		full := e.Message.Parts[c.j].Text
		evidence := outputs.Read(full).Evidence(false, maxEvidenceLines)
		keep = cutToFit(w.Counter(), e, keep, over, func(keep int) {
			// The tail holds the instruction: three fifths of what is kept.
			e.Message.Parts[c.j].Text = cutText(full, c.tokens, keep, 2.0/5, evidence,
				fmt.Sprintf("%s %s of %s tokens from the middle of this message to fit the window; the full message is log message %s]", shrinkMarker, formatCount(c.tokens-keep), formatCount(c.tokens), logID(e)))
		})
		w.Touch(c.i)
		over -= before - e.Tokens
		protectedTokens -= before - e.Tokens
		dispose(w, e, policies.DispositionTruncated, TypeTruncate,
			fmt.Sprintf("a user message of %s tokens cut to %s: alone it takes more of the window than it can give", formatCount(c.tokens), formatCount(keep)))
		w.Warn(fmt.Sprintf("cut user message %s from %s to about %s tokens to fit the window; the full message stays in the log",
			logID(e), formatCount(c.tokens), formatCount(keep)))
	}
	return protectedTokens, over <= 0
}

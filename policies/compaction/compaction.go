package compaction

import (
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// target is the used-token count a transform aims at: the runner's
// compaction target, or the hard limit when none is set.
func target(w *policies.Work) int {
	if t := w.CompactionTarget(); t > 0 {
		return t
	}
	return w.HardLimit()
}

// logID is the id of the log message an entry shows, or its own id when synthesized.
func logID(e *agentstate.Entry) string {
	if e.SourceID != "" {
		return e.SourceID
	}
	return e.Message.ID
}

// ledger records what became of the log messages entries show (*policies.Work).
type ledger interface {
	DisposeEntry(e *agentstate.Entry, r policies.MessageReport)
}

// logReader finds a message of the request's log by id (*policies.Work):
// what a transform reads of an output the view shows cut, or of an id it
// must not take.
type logReader interface {
	LogMessage(id string) (*agentstate.Message, bool)
}

// dispose records a disposition for the log message an entry shows; a
// synthesized entry has no log message and is not recorded.
func dispose(l ledger, e *agentstate.Entry, d policies.Disposition, policy, reason string) {
	if e.SourceID == "" {
		return
	}
	l.DisposeEntry(e, policies.MessageReport{Disposition: d, Tokens: e.Tokens, Provenance: e.Provenance, Reason: reason, Policy: policy})
}

// unitTokens sums the counts of a unit's entries.
func unitTokens(entries []agentstate.Entry, u policies.Span) int {
	n := 0
	for i := u.Start; i < u.End; i++ {
		n += entries[i].Tokens
	}
	return n
}

// removeEntries returns entries without the marked ones.
func removeEntries(entries []agentstate.Entry, drop []bool) []agentstate.Entry {
	// In place, as policies edit entries: the runner reverts a step from
	// its own copy of the view. A new slice at each of the compaction points
	// of a long log was a tenth of what a compile of 100,000 messages
	// allocated.
	out := entries[:0]
	for i := range entries {
		if !drop[i] {
			out = append(out, entries[i])
		}
	}
	clear(entries[len(out):]) // what the dropped entries held goes
	return out
}

// copyParts returns a copy of m's parts that may be edited without touching
// the log the entry was made from.
func copyParts(m *agentstate.Message) {
	m.Parts = append([]agentstate.Part(nil), m.Parts...)
}

// formatCount formats a count with thousands separators: 12345 -> "12,345".
func formatCount(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + formatCount(-n)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// freeID returns id, or id with a numeric suffix, such that no entry of the
// view and no message of the log has it: a summary written again over the
// same messages must not take the id of one the log already holds.
func freeID(entries []agentstate.Entry, log logReader, id string) string {
	taken := func(c string) bool {
		for i := range entries {
			if entries[i].Message.ID == c || entries[i].SourceID == c {
				return true
			}
		}
		_, inLog := log.LogMessage(c)
		return inLog
	}
	c := id
	for n := 2; taken(c); n++ {
		c = id + "-" + strconv.Itoa(n)
	}
	return c
}

package agentstate

import "sync/atomic"

// CountMemo remembers the raw token count of a message's content, per
// encoding, for a message whose parts never change once made: those of a
// log the server keeps decoded beside a state, which every call by
// reference compiles again (docs/design.md, "Calls by reference").
// Counting such a log then costs a load per message instead of hashing its
// content for the count cache.
//
// A memo answers only for the parts it was made for (the same backing array
// and length): a copy of the message given other parts, shortened or
// rewritten, never reads it. Compiles only read the state they are given
// (docs/design.md, "Calls by reference"), so the same parts are the
// same content. Calls by reference to one state share its messages and their
// memos: a memo is safe for concurrent use.
//
// A memo is a cache, not part of the message's value: Equal says two memos
// are always equal, so that cmp compares messages as if they had none.
type CountMemo struct {
	parts *Part
	n     int
	// raw holds a count plus one, by encoding id; 0 is not known.
	raw [CountMemoEncodings]atomic.Int32
}

// CountMemoEncodings bounds the encoding ids (1 up to it, exclusive) a memo
// keeps a count for.
const CountMemoEncodings = 4

// MemoizeCounts gives every message of msgs that has parts a memo for them,
// in one allocation.
func MemoizeCounts(msgs []Message) {
	memos := make([]CountMemo, len(msgs))
	for i := range msgs {
		if m := &msgs[i]; len(m.Parts) > 0 {
			memos[i].parts, memos[i].n = &m.Parts[0], len(m.Parts)
			m.Counts = &memos[i]
		}
	}
}

func (m *CountMemo) holds(parts []Part, encoding uint8) bool {
	return m != nil && len(parts) == m.n && len(parts) > 0 && &parts[0] == m.parts && encoding > 0 && int(encoding) < CountMemoEncodings
}

// Raw is the raw count remembered for parts under an encoding.
func (m *CountMemo) Raw(parts []Part, encoding uint8) (int, bool) {
	if !m.holds(parts, encoding) {
		return 0, false
	}
	v := m.raw[encoding].Load()
	return int(v) - 1, v > 0
}

// Remember keeps parts' raw count under an encoding; a memo made for other
// parts keeps nothing.
func (m *CountMemo) Remember(parts []Part, encoding uint8, raw int) {
	if m.holds(parts, encoding) && raw >= 0 && raw < 1<<31-1 {
		m.raw[encoding].Store(int32(raw) + 1)
	}
}

// Equal reports true: memos are not compared (see CountMemo).
func (m *CountMemo) Equal(*CountMemo) bool { return true }

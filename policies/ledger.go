package policies

import (
	"maps"
	"slices"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// dispositionLedger is Work's record of what policies did with log messages.
// It is kept by log position, not by id: a compile of a long log disposes of
// most of it at one compaction point after another, and a map keyed by id,
// hashed and missed in cache at every record, cost more than the compaction
// it recorded (docs/design.md, "Performance").
type dispositionLedger struct {
	at []int32 // by log position: 1 + index into reports; 0 when none
	// reports are the reports made, live or rolled back.
	reports chunked[MessageReport]
	n       int // live records
	// other holds the records of ids that are not in the log.
	other map[string]MessageReport
}

// dispositionUndo is what one Dispose overwrote.
type dispositionUndo struct {
	pos     int // -1 for an id outside the log
	id      string
	old     MessageReport
	existed bool
}

func (l *dispositionLedger) get(pos int, id string) (MessageReport, bool) {
	if pos < 0 {
		r, ok := l.other[id]
		return r, ok
	}
	if pos >= len(l.at) || l.at[pos] == 0 {
		return MessageReport{}, false
	}
	return *l.report(l.at[pos]), true
}

// report is the report numbered k (1-based, as in at).
func (l *dispositionLedger) report(k int32) *MessageReport { return l.reports.at(int(k) - 1) }

func (l *dispositionLedger) set(pos int, logLen int, r MessageReport) {
	if pos < 0 {
		if l.other == nil {
			l.other = make(map[string]MessageReport)
		}
		if _, ok := l.other[r.MessageID]; !ok {
			l.n++
		}
		l.other[r.MessageID] = r
		return
	}
	if l.at == nil {
		l.at = make([]int32, logLen)
	}
	if k := l.at[pos]; k != 0 {
		*l.report(k) = r
		return
	}
	l.reports.add(r)
	l.at[pos] = int32(l.reports.n)
	l.n++
}

func (l *dispositionLedger) undo(u dispositionUndo) {
	switch {
	case u.existed && u.pos < 0:
		l.other[u.id] = u.old
	case u.existed:
		*l.report(l.at[u.pos]) = u.old
	case u.pos < 0:
		delete(l.other, u.id)
		l.n--
	default:
		l.at[u.pos] = 0
		l.n--
	}
}

// LogIndex is the position in State.Context.Messages of the message with
// id. hint, an entry's LogPos, is tried first: finding an entry's own
// message costs no lookup by id.
func (w *Work) LogIndex(id string, hint int32) (int, bool) {
	if w.State() == nil {
		return 0, false
	}
	if msgs := w.State().Context.Messages; hint > 0 && int(hint) <= len(msgs) && msgs[hint-1].ID == id {
		return int(hint) - 1, true
	}
	return w.logPos(id)
}

// ledgerPos is where the ledger keeps id's record: its log position, or -1
// for an id outside the log.
func (w *Work) ledgerPos(id string, hint int32) int {
	if pos, inLog := w.LogIndex(id, hint); inLog {
		return pos
	}
	return -1
}

// Dispose records what happened to a log message.
func (w *Work) Dispose(r MessageReport) { w.dispose(r, 0) }

// DisposeEntry records what happened to the log message entry e shows
// (r.MessageID is e's SourceID; nothing is recorded for a synthesized entry).
// It finds the message by e's position, without looking its id up.
func (w *Work) DisposeEntry(e *agentstate.Entry, r MessageReport) {
	r.MessageID = e.SourceID
	w.dispose(r, e.LogPos)
}

func (w *Work) dispose(r MessageReport, hint int32) {
	if r.MessageID == "" {
		return
	}
	pos, logLen := w.ledgerPos(r.MessageID, hint), 0
	if w.State() != nil {
		logLen = len(w.State().Context.Messages)
	}
	if w.journal != nil {
		old, existed := w.dispositions.get(pos, r.MessageID)
		w.journal.dispositions = append(w.journal.dispositions, dispositionUndo{pos, r.MessageID, old, existed})
	}
	w.dispositions.set(pos, logLen, r)
	if w.tape != nil {
		w.tape.dispose(r, hint)
	}
}

// Disposition is what a policy did with the log message with id, if any.
func (w *Work) Disposition(id string) (MessageReport, bool) {
	if w.dispositions.n == 0 {
		return MessageReport{}, false
	}
	return w.dispositions.get(w.ledgerPos(id, 0), id)
}

// EntryDisposition is what a policy did with the log message entry e shows,
// found by e's position.
func (w *Work) EntryDisposition(e *agentstate.Entry) (MessageReport, bool) {
	if w.dispositions.n == 0 || e.SourceID == "" {
		return MessageReport{}, false
	}
	return w.dispositions.get(w.ledgerPos(e.SourceID, e.LogPos), e.SourceID)
}

// DispositionAt is what a policy did with the log message at position i.
func (w *Work) DispositionAt(i int) (MessageReport, bool) {
	return w.dispositions.get(i, "")
}

// Dispositions lists every record: those of log messages in log order, then
// the others by id.
func (w *Work) Dispositions() []MessageReport {
	out := make([]MessageReport, 0, w.dispositions.n)
	for _, k := range w.dispositions.at {
		if k != 0 {
			out = append(out, *w.dispositions.report(k))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(w.dispositions.other)) {
		out = append(out, w.dispositions.other[id])
	}
	return out
}

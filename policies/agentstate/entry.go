package agentstate

// Entry is one message of the working view, with its bookkeeping.
type Entry struct {
	Message Message
	// SourceID is the id of the log message this entry shows ("" when synthesized).
	SourceID string
	// Tokens is the message's count when Counted; policies that change Message call Work.Touch.
	Tokens     int
	Provenance Provenance
	Counted    bool
	// Changed is set once the entry differs from the log message it shows.
	Changed bool
	// Unsettled is set by the runner on an entry that a later compile of the
	// same log, grown by appends, may show differently: one changed by a step
	// whose result depends on later messages, or by compaction outside a
	// compaction point. The stable prefix ends at the first one.
	Unsettled bool
	// LogPos is 1 + the position in State.Context.Messages of the message
	// SourceID names (0 when synthesized), set by EntriesFromLog: a hint
	// that Work checks against SourceID before use, so that recording a
	// disposition costs no lookup by id.
	LogPos int32
}

// EntriesFromLog makes the initial view of a log: one entry per message, none counted.
func EntriesFromLog(log []Message) []Entry {
	entries := make([]Entry, len(log))
	for i := range log {
		entries[i] = Entry{Message: log[i], SourceID: log[i].ID, LogPos: int32(i + 1)}
	}
	return entries
}

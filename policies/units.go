package policies

// Span is a half-open range [Start, End) of entries.
type Span struct{ Start, End int }

// Len is the number of entries in the span.
func (s Span) Len() int { return s.End - s.Start }

// Units splits entries into the smallest ranges that must be kept or dropped
// whole: an assistant message that calls tools together with the tool messages
// right after it that answer those calls, or any other single message.
func Units(entries []Entry) []Span {
	units := make([]Span, 0, len(entries))
	for i := 0; i < len(entries); {
		end := i + 1
		if m := &entries[i].Message; m.Role == RoleAssistant && m.HasToolCalls() {
			for end < len(entries) && entries[end].Message.Role == RoleTool {
				end++
			}
		}
		units = append(units, Span{i, end})
		i = end
	}
	return units
}

// IsTurnStart reports whether a message opens a turn: a regular user message.
// Events, summaries and repairs do not.
func IsTurnStart(m *Message) bool {
	return m.Role == RoleUser && m.Kind == KindRegular
}

// TurnStarts returns the indexes of the entries that open turns, oldest first.
func TurnStarts(entries []Entry) []int {
	var starts []int
	for i := range entries {
		if IsTurnStart(&entries[i].Message) {
			starts = append(starts, i)
		}
	}
	return starts
}

// RecentStart returns the index of the first entry of the latest n turns (0
// when there are fewer turns; len(entries) when n is 0).
func RecentStart(entries []Entry, n int) int {
	if n <= 0 {
		return len(entries)
	}
	starts := TurnStarts(entries)
	if len(starts) <= n {
		return 0
	}
	return starts[len(starts)-n]
}

// FirstTask returns the index of the first regular user message, or -1.
func FirstTask(entries []Entry) int {
	for i := range entries {
		if IsTurnStart(&entries[i].Message) {
			return i
		}
	}
	return -1
}

// IsToolTrace reports whether a message belongs to the tool trace: a tool
// message, or an assistant message that calls tools.
func IsToolTrace(m *Message) bool {
	return m.Role == RoleTool || (m.Role == RoleAssistant && m.HasToolCalls())
}

// EntriesFromLog makes the initial view of a log: one entry per message, none counted.
func EntriesFromLog(log []Message) []Entry {
	entries := make([]Entry, len(log))
	for i := range log {
		entries[i] = Entry{Message: log[i], SourceID: log[i].ID}
	}
	return entries
}

package adapter

import (
	"reflect"
	"sync"
	"unsafe"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// decodedLog is a state's log as this server decoded and validated it,
// kept beside the state in the reference store so that a call naming that
// state by reference decodes only the messages it appends (docs/ARCHITECTURE.md,
// "Calls by reference"). Nothing in it changes once it is made, and the
// pipeline only reads the log it is given, so calls share it.
type decodedLog struct {
	// from is the log it was decoded from: a call's log extends it when
	// its first messages are these very messages (a referenced state's log
	// is shared, never changed).
	from []*ctxcv1.Message
	// messages is the decoded log, capped at its length: whoever appends
	// to it copies first.
	messages []agentstate.Message
	backing  *logBacking
	ids      *idIndex
	// longest is the longest piece a text of the log tokenizes to
	// (tokens.LongestPiece).
	longest int
	// bytes is what keeping it costs beyond the state it was decoded from.
	bytes int64
}

// logBacking is the array a chain of logs, each the one before it with
// messages appended, share: a log extends it in place only when nothing
// was appended after its own messages yet, so no log ever sees a message
// change.
type logBacking struct {
	mu   sync.Mutex
	msgs []agentstate.Message
}

// idIndex maps the ids of a log's messages to their indexes: its own
// (those appended last) over those of the log it extends. A chain of them
// is flattened every maxIDLayers appends, so a lookup reads a bounded
// number of maps.
type idIndex struct {
	parent *idIndex
	own    map[string]int
	depth  int
}

const maxIDLayers = 16

func (x *idIndex) get(id string) (int, bool) {
	for ; x != nil; x = x.parent {
		if i, ok := x.own[id]; ok {
			return i, true
		}
	}
	return 0, false
}

// id looks up the index of a message of l's log by its id.
func (l *decodedLog) id(id string) (int, bool) {
	if l == nil {
		return 0, false
	}
	return l.ids.get(id)
}

// DecodedBytesPerMessage and DecodedBytesPerPart are what a decoded log
// kept beside a state holds per message (its Message, its count memo and its
// entry in the id index) and per part, beyond the strings it shares with the state it
// was decoded from: what it is charged against state_refs.max_bytes.
const (
	DecodedBytesPerMessage = int64(unsafe.Sizeof(agentstate.Message{})+unsafe.Sizeof(agentstate.CountMemo{})) + 64
	DecodedBytesPerPart    = int64(unsafe.Sizeof(agentstate.Part{}))
)

// newDecodedLog keeps a log decoded whole; ids maps every message's id to
// its index, and is the log's from now on.
func newDecodedLog(from []*ctxcv1.Message, msgs []agentstate.Message, ids map[string]int, parts, longest int) *decodedLog {
	msgs = msgs[:len(msgs):len(msgs)]
	return &decodedLog{from: from, messages: msgs, backing: &logBacking{msgs: msgs}, ids: &idIndex{own: ids},
		longest: longest, bytes: int64(len(msgs))*DecodedBytesPerMessage + int64(parts)*DecodedBytesPerPart}
}

// extends says whether in is l's log followed by appended messages.
func (l *decodedLog) extends(in []*ctxcv1.Message) bool {
	if l == nil || len(in) < len(l.from) {
		return false
	}
	for i, m := range l.from {
		if in[i] != m {
			return false
		}
	}
	return true
}

// extend returns the log that is l's followed by tail, decoded from from
// (l's log and the appended messages); own maps the ids of tail.
func (l *decodedLog) extend(from []*ctxcv1.Message, tail []agentstate.Message, own map[string]int, parts, longest int) *decodedLog {
	n, k := len(l.messages), len(tail)
	out := &decodedLog{from: from, longest: max(l.longest, longest),
		bytes: l.bytes + int64(k)*DecodedBytesPerMessage + int64(parts)*DecodedBytesPerPart}
	b := l.backing
	b.mu.Lock()
	switch {
	case len(b.msgs) == n:
		b.msgs = append(b.msgs, tail...)
		out.messages, out.backing = b.msgs[:n+k:n+k], b
	case len(b.msgs) >= n+k && sameDecoded(b.msgs[n:n+k], tail):
		// The same messages appended again (a retried call).
		out.messages, out.backing = b.msgs[:n+k:n+k], b
	}
	b.mu.Unlock()
	if out.messages == nil {
		// Another log extends l already: this one forks it.
		msgs := make([]agentstate.Message, n+k, n+k+max(k, (n+k)/4))
		copy(msgs, l.messages)
		copy(msgs[n:], tail)
		out.backing = &logBacking{msgs: msgs}
		out.messages = msgs[: n+k : n+k]
	}
	if l.ids.depth+1 < maxIDLayers {
		out.ids = &idIndex{parent: l.ids, own: own, depth: l.ids.depth + 1}
		return out
	}
	all := make(map[string]int, n+k)
	for i := range out.messages {
		all[out.messages[i].ID] = i
	}
	out.ids = &idIndex{own: all}
	return out
}

// sameDecoded is reflect.DeepEqual on two decodings of messages, but for
// their count memos: each decoding makes its own, and they hold counts, not
// content.
func sameDecoded(a, b []agentstate.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Counts, y.Counts = nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

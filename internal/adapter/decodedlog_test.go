package adapter

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// decodeExtending decodes log as a call by reference to a state whose
// decoded log is base would (nil: as a state sent whole).
func decodeExtending(base *decodedLog, log []*ctxcv1.Message) (*decoder, []agentstate.Message) {
	d := &decoder{limits: compiler.DefaultLimits()}
	if base != nil {
		d.call = &refCall{base: stateref.Resolved{Decoded: base}}
	}
	msgs := d.messages("state.context.messages", log)
	return d, msgs
}

func logMessage(i int, r *rand.Rand) *ctxcv1.Message {
	text := strings.Repeat(fmt.Sprintf("word%d ", r.IntN(1000)), 1+r.IntN(80))
	if r.IntN(7) == 0 {
		text += strings.Repeat("x", r.IntN(3000)) // a long piece
	}
	return &ctxcv1.Message{Id: "m" + strconv.Itoa(i), Role: ctxcv1.Role_ROLE_USER, Importance: uint32(r.IntN(100)),
		Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: text}}, {Content: &ctxcv1.Part_Text{Text: "and " + strconv.Itoa(i)}}}}
}

// TestDecodedLogsExtendAsAFullDecode: a chain of calls by reference, each
// appending to the last (past the id index's flattening), forking from
// older states and retrying the same append, decodes every log as a full
// decode of it would (messages, longest piece, duplicate ids found with the
// index of the first), and never changes a log decoded before.
func TestDecodedLogsExtendAsAFullDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var log []*ctxcv1.Message
	for i := range 30 {
		log = append(log, logMessage(i, r))
	}
	d, msgs := decodeExtending(nil, log)
	type kept struct {
		log      *decodedLog
		messages []agentstate.Message // a deep copy, as decoded then
	}
	snapshot := func(l *decodedLog) kept {
		_, again := decodeExtending(nil, l.from)
		return kept{log: l, messages: again}
	}
	logs := []kept{snapshot(d.decoded)}
	if diff := cmp.Diff(logs[0].messages, msgs); diff != "" {
		t.Fatalf("the first decode differs from itself:\n%s", diff)
	}
	next := len(log)
	shared, forked, retries := 0, 0, 0
	for step := range 3 * maxIDLayers {
		base := logs[len(logs)-1].log
		var from []*ctxcv1.Message
		retry := false
		if prev := logs[max(len(logs)-2, 0)].log; step%7 == 6 && prev.extends(base.from) && len(base.from) > len(prev.from) {
			// A retry: what the last call appended, appended again to its base.
			from = append([]*ctxcv1.Message(nil), prev.from...)
			for _, m := range base.from[len(prev.from):] {
				from = append(from, protoClone(m))
			}
			base, retry = prev, true
		} else {
			if step%5 == 3 {
				base = logs[r.IntN(len(logs))].log // a fork of an older state
			}
			from = append([]*ctxcv1.Message(nil), base.from...)
			for range 1 + r.IntN(3) {
				from = append(from, logMessage(next, r))
				next++
			}
		}
		d, got := decodeExtending(base, from)
		full, want := decodeExtending(nil, from)
		if d.err() != nil || full.err() != nil {
			t.Fatalf("step %d: %v / %v", step, d.err(), full.err())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: extending differs from a full decode (-full +extended):\n%s", step, diff)
		}
		if d.longestPiece != full.longestPiece || d.decoded.longest != full.decoded.longest {
			t.Fatalf("step %d: longest piece %d (log %d), want %d (%d)", step, d.longestPiece, d.decoded.longest, full.longestPiece, full.decoded.longest)
		}
		for i := range from {
			if k, ok := d.decoded.id(from[i].GetId()); !ok || k != i {
				t.Fatalf("step %d: id %q at %d, %v; want %d", step, from[i].GetId(), k, ok, i)
			}
		}
		// A message appended with an id the log has is refused naming the first.
		k := r.IntN(len(from))
		dup := logMessage(0, r)
		dup.Id = from[k].GetId()
		bad, _ := decodeExtending(d.decoded, append(from[:len(from):len(from)], dup))
		want1 := fmt.Sprintf("state.context.messages[%d].id: duplicate id %q (also state.context.messages[%d].id)", len(from), dup.GetId(), k)
		if err := bad.err(); err == nil || !strings.Contains(err.Error(), want1) {
			t.Fatalf("step %d: appending a known id: %v, want %q", step, err, want1)
		}
		if bad.decoded != nil {
			t.Fatalf("step %d: a log with a violation was kept", step)
		}
		if d.decoded.backing == base.backing {
			shared++
			if retry {
				retries++
			}
		} else {
			forked++
		}
		logs = append(logs, snapshot(d.decoded))
	}
	for j, l := range logs {
		if !reflect.DeepEqual(l.messages, l.log.messages) {
			t.Fatalf("log %d changed after it was decoded:\n%s", j, cmp.Diff(l.messages, l.log.messages))
		}
	}
	t.Logf("%d logs shared their base's array (%d retries), %d forked", shared, retries, forked)
	if shared == 0 || forked == 0 || retries == 0 {
		t.Fatalf("%d logs shared their base's array (%d retries), %d forked: the chain does not exercise each", shared, retries, forked)
	}
	if depth := logs[len(logs)-1].log.ids.depth; depth >= maxIDLayers {
		t.Fatalf("id index %d layers deep, bound %d", depth, maxIDLayers)
	}
}

func protoClone(m *ctxcv1.Message) *ctxcv1.Message { return proto.CloneOf(m) }

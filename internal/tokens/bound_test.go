package tokens

import (
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// A counter bound to a call that has ended cuts a long run short, and what
// it counted then is neither cached nor remembered: the next count of the
// same text, unbound, is exact.
func TestBoundCounterStopsAndKeepsNothing(t *testing.T) {
	s := service(t)
	_, c, err := s.Resolve(agentstate.ModelSpec{Name: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a", 1<<20) // one piece: a count takes about 0.3 s
	exact := s.encoders[EncodingO200K].count(text)
	done := make(chan struct{})
	close(done)
	bound := c.(agentstate.BoundCounter).Bound(done)

	if got := bound.CountText(text); got == exact {
		t.Errorf("bound counter after its call ended: counted %d, the exact count; want it cut short", got)
	}
	m := agentstate.Message{ID: "m", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}}
	if got, _ := bound.CountMessage(&m); got <= exact {
		t.Errorf("bound message count %d, want over the exact %d (each byte not counted counts one)", got, exact)
	}
	if _, ok := m.Counts.Raw(m.Parts, c.(*counter).enc.id); ok {
		t.Error("a count cut short was remembered on the message")
	}
	if got := c.CountText(text); got != exact {
		t.Errorf("unbound count after a cut-short one = %d, want the exact %d (nothing cached)", got, exact)
	}
	m2 := agentstate.Message{ID: "m", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}}
	want, _ := c.(*counter).framed(&m2, exact)
	if got, _ := c.CountMessage(&m2); got != want {
		t.Errorf("unbound message count after a cut-short one = %d, want %d", got, want)
	}
}

// A long piece's merges stop once done is closed, answering more parts than
// the piece has tokens, and say so.
func TestMergeHeapStops(t *testing.T) {
	enc := service(t).encoders[EncodingO200K]
	if err := enc.ready(); err != nil {
		t.Fatal(err)
	}
	piece := strings.Repeat("ab", 64<<10)
	exact, complete := enc.mergeHeap(piece, nil)
	if !complete {
		t.Fatal("mergeHeap without done did not complete")
	}
	done := make(chan struct{})
	close(done)
	got, complete := enc.mergeHeap(piece, done)
	if complete || got <= exact {
		t.Errorf("mergeHeap with done closed = %d, %v; want more than %d parts, incomplete", got, complete, exact)
	}
}

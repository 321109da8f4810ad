package stateref

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func randomState(r *rand.Rand, messages int) *ctxcv1.AgentState {
	st := &ctxcv1.AgentState{SchemaVersion: 1, AgentId: "a" + strconv.Itoa(r.IntN(3)), Model: &ctxcv1.ModelSpec{Name: "gpt-4o"},
		Context: &ctxcv1.AgentContext{SystemPrompt: "p" + strconv.Itoa(r.IntN(3)), Metadata: map[string]string{"k": strconv.Itoa(r.IntN(3))}}}
	for i := range messages {
		st.Context.Messages = append(st.Context.Messages, message(1000*r.IntN(1000)+i))
	}
	return st
}

func randomOverlay(r *rand.Rand) Overlay {
	var o Overlay
	for i := range r.IntN(4) {
		o.Appended = append(o.Appended, message(-1-i))
	}
	if r.IntN(2) == 0 {
		o.State = &ctxcv1.AgentState{}
		if r.IntN(2) == 0 {
			o.State.Model = &ctxcv1.ModelSpec{Name: "claude-sonnet-4-5"}
		}
		if r.IntN(2) == 0 {
			o.State.Context = &ctxcv1.AgentContext{SystemPrompt: "new prompt"}
		}
		if r.IntN(2) == 0 {
			o.State.Execution = &ctxcv1.Execution{Id: "e9", StepIndex: 2}
		}
	}
	return o
}

// Extend leaves the referenced state as it was, puts the appended messages
// after its log, and replaces exactly the fields the overlay sets; an
// overlay's encoding decodes back to what it carried, so a replica that
// reads it from Redis extends the same way.
func TestExtendProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 29))
	for i := range 300 {
		base := randomState(r, r.IntN(6))
		before := proto.Clone(base)
		o := randomOverlay(r)
		got := Extend(base, o)
		if diff := cmp.Diff(before, base, protocmp.Transform()); diff != "" {
			t.Fatalf("case %d: Extend changed the referenced state:\n%s", i, diff)
		}
		want := proto.Clone(base).(*ctxcv1.AgentState)
		want.Context.Messages = append(want.Context.Messages, o.Appended...)
		if m := o.State.GetModel(); m != nil {
			want.Model = m
		}
		if e := o.State.GetExecution(); e != nil {
			want.Execution = e
		}
		if p := o.State.GetContext().GetSystemPrompt(); p != "" {
			want.Context.SystemPrompt = p
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Fatalf("case %d (-want +got):\n%s", i, diff)
		}
		var decoded ctxcv1.AgentState
		if err := proto.Unmarshal(o.Encode(), &decoded); err != nil {
			t.Fatal(err)
		}
		again := Extend(base, Overlay{State: &decoded, Appended: decoded.GetContext().GetMessages()})
		if diff := cmp.Diff(got, again, protocmp.Transform()); diff != "" {
			t.Fatalf("case %d: extended from the encoded overlay differs (-direct +decoded):\n%s", i, diff)
		}
		if AppendedRef("sr1-base", o.Encode()) != AppendedRef("sr1-base", o.Encode()) {
			t.Fatalf("case %d: a reference is not a function of its content", i)
		}
	}
}

// References of different contents differ, and a chain depends on its base.
func TestRefsDistinguish(t *testing.T) {
	seen := map[string]string{}
	for i := range 2000 {
		for _, ref := range []string{WholeRef(nil, []byte(fmt.Sprint(i))), AppendedRef("sr1-"+strconv.Itoa(i), []byte("same"))} {
			if prev, dup := seen[ref]; dup {
				t.Fatalf("%s named both %s and %d", ref, prev, i)
			}
			seen[ref] = strconv.Itoa(i)
		}
	}
}

// A Redis entry that is not one (damaged, foreign, truncated) is an error,
// never a panic or a state.
func FuzzParseEntry(f *testing.F) {
	f.Add([]byte(entryHeader + "-\n0\n" + "\x0a\x00"))
	f.Add([]byte(entryHeader + "sr1-00\n3\n"))
	f.Add([]byte("ctxc-state-ref 2\n-\n0\n"))
	f.Add([]byte(entryHeader))
	f.Fuzz(func(t *testing.T, raw []byte) {
		base, depth, body, err := parseEntry(raw)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(raw, []byte(entryHeader)) || depth < 0 || depth > maxChain || !bytes.HasSuffix(raw, body) {
			t.Fatalf("accepted %q: base %q depth %d body %q", raw, base, depth, body)
		}
	})
}

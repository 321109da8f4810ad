package routing

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// inputFromBytes decodes arbitrary bytes into a Route input, total like
// statetest.FromBytes: ids and call ids come from small spaces so that they
// collide with the state's ("m<n>", "c<n>", "e<n>") and with generated ones.
func inputFromBytes(data []byte) Input {
	i := 0
	next := func() byte {
		if i < len(data) {
			i++
			return data[i-1]
		}
		return 0
	}
	kind := next() % 4
	if kind == 3 {
		return Event{Text: string(data), Role: agentstate.Role(next() % 6), Metadata: map[string]string{MetaOutput: "x"}}
	}
	idSpace := []string{"", "", "m1", "m2", "e1-s0-0", "exec-1-u0", "evt-3", "x"}
	var msgs []agentstate.Message
	for len(msgs) < 16 && i < len(data) {
		b := next()
		m := agentstate.Message{ID: idSpace[b%8], Role: agentstate.Role(b >> 3 % 6), Kind: agentstate.MessageKind(next() % 6)}
		for k := 0; k < int(next()%4); k++ {
			a := next()
			switch a % 7 {
			case 0:
				m.Parts = append(m.Parts, agentstate.TextPart(fmt.Sprint("t", a)))
			case 1:
				m.Parts = append(m.Parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: fmt.Sprintf("c%d", a>>3%9), Name: []string{"", "grep"}[a>>6%2]}})
			case 2:
				m.Parts = append(m.Parts, agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: fmt.Sprintf("c%d", a>>3%9), IsError: a&0x40 != 0}})
			case 3:
				m.Parts = append(m.Parts, agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Signature: []byte{a}}})
			default:
				m.Parts = append(m.Parts, agentstate.Part{Kind: agentstate.PartKind(a % 9)})
			}
		}
		msgs = append(msgs, m)
	}
	if kind == 0 {
		return &UserTurn{Messages: msgs, ExecutionID: []string{"", "e1", "exec-1", "new"}[next()%4]}
	}
	st := Step{Messages: msgs, FinishReason: FinishReason(next() % 6)}
	if b := next(); b%3 == 0 {
		st.Error = "failed"
	} else if b%3 == 1 {
		st.Usage = &agentstate.Usage{InputTokens: uint32(b)}
	}
	return st
}

func FuzzRoute(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0, 1, 4, 7, 5, 7, 14, 0x13}, []byte{1, 0x18, 0, 2, 1, 0x21, 0x2a, 2, 1})
	f.Add([]byte{10, 1, 0, 3, 4, 3, 14, 0x11}, []byte{0, 0x10, 0, 1, 0, 1})
	f.Add([]byte{0, 2, 8, 15, 0}, []byte("\x03the user checked in"))
	f.Add([]byte{10, 1, 0, 4, 2, 14, 0x11}, []byte{2, 0x1a, 0, 1, 2, 0x1c, 0, 1, 0x0a, 4, 0})
	f.Fuzz(func(t *testing.T, stateBytes, inputBytes []byte) {
		st := statetest.FromBytes(stateBytes)
		in := inputFromBytes(inputBytes)
		before := deepCopy(st)
		res, err := Route(st, in, Options{})
		if !reflect.DeepEqual(before, st) {
			t.Fatalf("Route modified its input state (-before +after):\n%s", cmp.Diff(before, st))
		}
		if err != nil {
			var iae *agentstate.InvalidArgumentError
			if !errors.As(err, &iae) || iae.Reason != ReasonInvalidRouteInput || len(iae.Violations) == 0 {
				t.Fatalf("error %v is not an InvalidArgumentError with violations", err)
			}
			for _, v := range iae.Violations {
				if v.Field == "" || v.Description == "" {
					t.Fatalf("violation without field or description: %+v", v)
				}
			}
			return
		}
		checkAppended(t, before, res)
	})
}

package adapter

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// decodeLog decodes a valid state's log.
func decodeLog(t *testing.T, in *ctxcv1.AgentState) []agentstate.Message {
	t.Helper()
	st, err := decodeState(in)
	if err != nil {
		t.Fatal(err)
	}
	return st.Context.Messages
}

// checkCompiled asserts that compiledToProto gives what messagesToProto
// gives, and says which messages it took from the log as they were.
func checkCompiled(t *testing.T, msgs []agentstate.Message, log []*ctxcv1.Message) (reused []bool) {
	t.Helper()
	got := compiledToProto(msgs, log)
	if diff := cmp.Diff(messagesToProto(msgs), got, protocmp.Transform()); diff != "" {
		t.Fatalf("compiledToProto differs from messagesToProto (-converted +compiled):\n%s", diff)
	}
	reused = make([]bool, len(got))
	for i, pm := range got {
		for _, lm := range log {
			reused[i] = reused[i] || pm == lm
		}
	}
	return reused
}

// TestCompiledReusesUnchangedLogMessages: a log compiled as it is, in order
// or not and with messages left out, is answered with the request's own
// messages, every field and oneof case included.
func TestCompiledReusesUnchangedLogMessages(t *testing.T) {
	for i, st := range everyFieldStates() {
		log := st.GetContext().GetMessages()
		msgs := decodeLog(t, st)
		views := map[string][]agentstate.Message{
			"as is":    msgs,
			"reversed": {msgs[6], msgs[5], msgs[4], msgs[3], msgs[2], msgs[1], msgs[0]},
			"some":     {msgs[1], msgs[4], msgs[5]},
		}
		for name, view := range views {
			for k, ok := range checkCompiled(t, view, log) {
				if !ok {
					t.Errorf("state %d, %s: message %s unchanged but converted again", i, name, view[k].ID)
				}
			}
		}
	}
}

// TestCompiledConvertsChangedMessages: a message that differs from the log
// message of its id in any one field the response carries is converted, and
// the response holds the change.
func TestCompiledConvertsChangedMessages(t *testing.T) {
	when := time.Unix(1_700_000_000, 5).UTC()
	changes := map[string]func(m *agentstate.Message) bool{
		"role": func(m *agentstate.Message) bool {
			m.Role = map[bool]agentstate.Role{true: agentstate.RoleAssistant, false: agentstate.RoleUser}[m.Role == agentstate.RoleUser]
			return true
		},
		"kind": func(m *agentstate.Message) bool {
			m.Kind = map[bool]agentstate.MessageKind{true: agentstate.KindSummary, false: agentstate.KindRegular}[m.Kind == agentstate.KindRegular]
			return true
		},
		"pinned":     func(m *agentstate.Message) bool { m.Pinned = !m.Pinned; return true },
		"importance": func(m *agentstate.Message) bool { m.Importance = 100 - m.Importance/2 - 1; return true },
		"execution":  func(m *agentstate.Message) bool { m.ExecutionID += "x"; return true },
		"metadata":   func(m *agentstate.Message) bool { m.Metadata = map[string]string{"k": "v"}; return true },
		"covers": func(m *agentstate.Message) bool {
			m.CoversMessageIDs = append(m.CoversMessageIDs[:len(m.CoversMessageIDs):len(m.CoversMessageIDs)], "mx")
			return true
		},
		"usage": func(m *agentstate.Message) bool {
			if m.Usage == nil {
				m.Usage = &agentstate.Usage{}
			} else {
				m.Usage = &agentstate.Usage{InputTokens: m.Usage.InputTokens, CachedInputTokens: m.Usage.CachedInputTokens, OutputTokens: m.Usage.OutputTokens + 1}
			}
			return true
		},
		"no usage": func(m *agentstate.Message) bool { ok := m.Usage != nil; m.Usage = nil; return ok },
		"mask": func(m *agentstate.Message) bool {
			if m.Mask == nil {
				m.Mask = &agentstate.Mask{}
			} else {
				m.Mask = &agentstate.Mask{Reason: m.Mask.Reason, Placeholder: m.Mask.Placeholder + "!", OriginalTokenCount: m.Mask.OriginalTokenCount}
			}
			return true
		},
		"no mask": func(m *agentstate.Message) bool { ok := m.Mask != nil; m.Mask = nil; return ok },
		"create time": func(m *agentstate.Message) bool {
			if m.CreateTime == nil {
				m.CreateTime = &when
			} else {
				later := m.CreateTime.Add(time.Nanosecond)
				m.CreateTime = &later
			}
			return true
		},
		"create time seconds": func(m *agentstate.Message) bool {
			if m.CreateTime == nil {
				return false
			}
			later := m.CreateTime.Add(time.Second)
			m.CreateTime = &later
			return true
		},
		"no create time": func(m *agentstate.Message) bool { ok := m.CreateTime != nil; m.CreateTime = nil; return ok },
		"a part fewer":   func(m *agentstate.Message) bool { m.Parts = m.Parts[:len(m.Parts)-1]; return true },
		"a part's kind": func(m *agentstate.Message) bool {
			if p := &m.Parts[0]; p.Kind == agentstate.PartText {
				p.Kind = agentstate.PartReasoning // the text stays where a text part keeps it
			} else {
				*p = agentstate.TextPart(p.Text)
			}
			return true
		},
	}
	// Each part's content, one part at a time.
	for k := range 4 {
		changes["content of part "+strconv.Itoa(k)] = func(m *agentstate.Message) bool {
			if k >= len(m.Parts) {
				return false
			}
			p := &m.Parts[k]
			switch p.Kind {
			case agentstate.PartText:
				p.Text += "."
			case agentstate.PartToolCall:
				p.ToolCall.ArgumentsJSON += " "
			case agentstate.PartToolResult:
				p.ToolResult.IsError = !p.ToolResult.IsError
			case agentstate.PartImage:
				if p.Image.Source == agentstate.ImageSourceData {
					p.Image.Data = append(p.Image.Data[:len(p.Image.Data):len(p.Image.Data)], 0)
				} else {
					p.Image.URL += "?v=2"
				}
			case agentstate.PartReasoning:
				p.Reasoning.Signature = append(p.Reasoning.Signature[:len(p.Reasoning.Signature):len(p.Reasoning.Signature)], 1)
			}
			return true
		}
	}
	for _, st := range everyFieldStates() {
		log := st.GetContext().GetMessages()
		for name, change := range changes {
			for i := range log {
				msgs := decodeLog(t, st)
				m := &msgs[i]
				m.Parts = append([]agentstate.Part(nil), m.Parts...) // the change must not reach the other copies
				if !change(m) {
					continue
				}
				if checkCompiled(t, msgs, log)[i] {
					t.Errorf("%s changed on %s, yet the log message was sent", name, m.ID)
				}
			}
		}
	}
}

// TestCompiledConvertsMessagesWithUnknownFields: fields this build does not
// know, anywhere in a log message, are not passed back to the caller.
func TestCompiledConvertsMessagesWithUnknownFields(t *testing.T) {
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7)
	for i := range everyFieldState().GetContext().GetMessages() {
		for _, where := range []string{"message", "part", "inner", "usage", "mask", "create_time"} {
			st := everyFieldState()
			log := st.GetContext().GetMessages()
			msgs := decodeLog(t, st)
			pm := log[i]
			var target proto.Message
			switch where {
			case "message":
				target = pm
			case "part":
				target = pm.GetParts()[0]
			case "inner":
				switch c := pm.GetParts()[0].GetContent().(type) {
				case *ctxcv1.Part_ToolCall:
					target = c.ToolCall
				case *ctxcv1.Part_ToolResult:
					target = c.ToolResult
				case *ctxcv1.Part_Image:
					target = c.Image
				case *ctxcv1.Part_Reasoning:
					target = c.Reasoning
				}
			case "usage":
				target = pm.GetUsage()
			case "mask":
				target = pm.GetMask()
			case "create_time":
				target = pm.GetCreateTime()
			}
			if target == nil || !target.ProtoReflect().IsValid() {
				continue
			}
			target.ProtoReflect().SetUnknown(unknown)
			if checkCompiled(t, msgs, log)[i] {
				t.Errorf("message %s with an unknown field in its %s was sent as it came", pm.GetId(), where)
			}
		}
	}
}

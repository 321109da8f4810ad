package statetest

import (
	"fmt"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// FromBytes decodes arbitrary bytes into a state, for fuzz targets. It never
// fails: each byte picks an operation (add a user, event, assistant, tool or
// summary message, pin, mask, empty a part, reuse an id, set the execution...)
// and the next byte, when needed, its argument. Call ids come from a small space
// so that results match, miss and duplicate calls. The result is usually
// broken in every way normalize is meant to repair, and in some it is not.
func FromBytes(data []byte) *agentstate.State {
	st := &agentstate.State{SchemaVersion: agentstate.CurrentSchemaVersion, Model: agentstate.ModelSpec{Name: "fuzz"}}
	var msgs []agentstate.Message
	exec := ""
	arg := func(i *int) byte {
		*i++
		if *i < len(data) {
			return data[*i]
		}
		return 0
	}
	last := func() *agentstate.Message {
		if len(msgs) == 0 {
			return nil
		}
		return &msgs[len(msgs)-1]
	}
	add := func(m agentstate.Message) {
		m.ID = fmt.Sprintf("m%d", len(msgs))
		m.ExecutionID = exec
		msgs = append(msgs, m)
	}
	result := func(a byte) agentstate.Part {
		name := ""
		if a&0x10 != 0 {
			name = toolNames[int(a)%len(toolNames)]
		}
		return agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{
			ToolCallID: fmt.Sprintf("c%d", a%8), Name: name, Content: words[int(a)%len(words)], IsError: a&0x20 != 0}}
	}
	for i := 0; i < len(data) && len(msgs) < 512; i++ {
		op := data[i] % 16
		switch op {
		case 0:
			add(agentstate.Message{Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("task " + words[int(arg(&i))%len(words)])}})
		case 1:
			add(agentstate.Message{Role: agentstate.RoleUser, Kind: agentstate.KindEvent, Parts: []agentstate.Part{agentstate.TextPart("[event]")}})
		case 2:
			add(agentstate.Message{Role: agentstate.RoleSystem, Kind: agentstate.KindEvent, Parts: []agentstate.Part{agentstate.TextPart("[system event]")}})
		case 3:
			add(agentstate.Message{Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart("answer")}})
		case 4:
			a := arg(&i)
			m := agentstate.Message{Role: agentstate.RoleAssistant}
			for k := 0; k <= int(a%3); k++ {
				id := fmt.Sprintf("c%d", (int(a)+k)%8)
				m.Parts = append(m.Parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: toolNames[k%len(toolNames)], ArgumentsJSON: `{"k":` + fmt.Sprint(k) + `}`}})
			}
			add(m)
		case 5:
			add(agentstate.Message{Role: agentstate.RoleTool, Parts: []agentstate.Part{result(arg(&i))}})
		case 6:
			add(agentstate.Message{Role: agentstate.RoleTool, Parts: []agentstate.Part{result(arg(&i)), result(arg(&i))}})
		case 7:
			a, b := int(arg(&i)), int(arg(&i))
			var covers []string
			for k := 0; k < b%6 && len(msgs) > 0; k++ {
				covers = append(covers, msgs[(a+k)%len(msgs)].ID)
			}
			add(agentstate.Message{Role: agentstate.RoleUser, Kind: agentstate.KindSummary, CoversMessageIDs: covers, Parts: []agentstate.Part{agentstate.TextPart("summary")}})
		case 8:
			if m := last(); m != nil {
				m.Pinned = true
			}
		case 9:
			if m := last(); m != nil {
				m.Mask = &agentstate.Mask{Reason: "fuzz", Placeholder: "[masked]", OriginalTokenCount: uint32(arg(&i))}
			}
		case 10:
			a := arg(&i)
			exec = ""
			if a%5 != 0 {
				exec = fmt.Sprintf("e%d", a%5)
			}
		case 11:
			if m := last(); m != nil {
				m.Parts = append(m.Parts, agentstate.TextPart(""))
			}
		case 12:
			if m := last(); m != nil {
				m.Parts = append(m.Parts, agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: "r", Signature: []byte{arg(&i), 0xff}}})
			}
		case 13:
			add(agentstate.Message{Role: agentstate.Role(arg(&i) % 6)})
		case 14:
			a := arg(&i)
			st.Execution = agentstate.Execution{Status: agentstate.ExecutionStatus(a % 4)}
			if a&0x10 != 0 {
				st.Execution.ID = fmt.Sprintf("e%d", a%5)
			}
		case 15:
			if m := last(); m != nil && len(msgs) > 1 {
				m.ID = msgs[int(arg(&i))%(len(msgs)-1)].ID
			}
		}
	}
	st.Context.Messages = msgs
	return st
}

package providers

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/normalize"
)

var update = flag.Bool("update", false, "rewrite golden files")

var formats = []agentstate.RenderFormat{agentstate.RenderOpenAI, agentstate.RenderAnthropic, agentstate.RenderGemini, agentstate.RenderOllama, agentstate.RenderOpenAIResponses}

// loadExample reads a README example (a protojson CompileRequest) and
// converts the fields rendering reads. The server owns the real conversion;
// policies may not import it.
func loadExample(t testing.TB, name string) *agentstate.State {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	var req ctxcv1.CompileRequest
	if err := protojson.Unmarshal(data, &req); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	pc := req.GetState().GetContext()
	st := &agentstate.State{
		SchemaVersion: agentstate.CurrentSchemaVersion,
		Model:         agentstate.ModelSpec{Name: req.GetState().GetModel().GetName(), Provider: req.GetState().GetModel().GetProvider()},
		Context:       agentstate.Context{SystemPrompt: pc.GetSystemPrompt(), ResponseFormat: pc.GetResponseFormat()},
		Execution:     agentstate.Execution{ID: req.GetState().GetExecution().GetId(), Status: agentstate.ExecutionStatus(req.GetState().GetExecution().GetStatus())},
	}
	for _, td := range pc.GetTools() {
		st.Context.Tools = append(st.Context.Tools, agentstate.ToolDefinition{Name: td.GetName(), Description: td.GetDescription(), ParametersJSON: td.GetParametersJson()})
	}
	for _, pm := range pc.GetMessages() {
		m := agentstate.Message{ID: pm.GetId(), Role: agentstate.Role(pm.GetRole()), Kind: agentstate.MessageKind(pm.GetKind()), ExecutionID: pm.GetExecutionId(), Pinned: pm.GetPinned()}
		for _, pp := range pm.GetParts() {
			var p agentstate.Part
			switch {
			case pp.GetToolCall() != nil:
				c := pp.GetToolCall()
				p = agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: c.GetId(), Name: c.GetName(), ArgumentsJSON: c.GetArgumentsJson()}}
			case pp.GetToolResult() != nil:
				r := pp.GetToolResult()
				p = agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: r.GetToolCallId(), Name: r.GetName(), Content: r.GetContent(), IsError: r.GetIsError()}}
			case pp.GetReasoning() != nil:
				r := pp.GetReasoning()
				p = agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: r.GetText(), Signature: r.GetSignature()}}
			case pp.GetImage() != nil:
				img := pp.GetImage()
				p = agentstate.Part{Kind: agentstate.PartImage, Image: agentstate.Image{Source: agentstate.ImageSourceURL, URL: img.GetUrl(), MediaType: img.GetMediaType()}}
				if img.GetData() != nil {
					p.Image = agentstate.Image{Source: agentstate.ImageSourceData, Data: img.GetData(), MediaType: img.GetMediaType()}
				}
			default:
				p = agentstate.TextPart(pp.GetText())
			}
			m.Parts = append(m.Parts, p)
		}
		st.Context.Messages = append(st.Context.Messages, m)
	}
	return st
}

// pngHeader is enough of a PNG for content sniffing.
var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

func text(s string) agentstate.Part { return agentstate.TextPart(s) }

func call(id, name, args string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: name, ArgumentsJSON: args}}
}

func result(id, name, content string, isErr bool) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: id, Name: name, Content: content, IsError: isErr}}
}

func reasoning(s string, sig []byte) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: s, Signature: sig}}
}

func msg(id string, role agentstate.Role, parts ...agentstate.Part) agentstate.Message {
	return agentstate.Message{ID: id, Role: role, Parts: parts}
}

// signedState is a small hand-written conversation with what the README
// examples lack: signed and redacted reasoning, inline and URL images, a
// failed result, arguments that are not JSON, a system event in the log, and
// a response format.
func signedState() *agentstate.State {
	return &agentstate.State{
		SchemaVersion: agentstate.CurrentSchemaVersion,
		Model:         agentstate.ModelSpec{Name: "claude-opus-4-1"},
		Context: agentstate.Context{
			SystemPrompt:   "You inspect screenshots for layout bugs.",
			Tools:          []agentstate.ToolDefinition{{Name: "crop", Description: "Crop the screenshot.", ParametersJSON: `{"type":"object","properties":{"box":{"type":"array"}}}`}, {Name: "ping"}},
			ResponseFormat: `{"type":"object","properties":{"verdict":{"type":"string"}},"required":["verdict"]}`,
			Messages: []agentstate.Message{
				msg("u1", agentstate.RoleUser, text("Is the header <nav> overlapping the logo?"),
					agentstate.Part{Kind: agentstate.PartImage, Image: agentstate.Image{Source: agentstate.ImageSourceData, Data: pngHeader, MediaType: "image/png"}},
					agentstate.Part{Kind: agentstate.PartImage, Image: agentstate.Image{Source: agentstate.ImageSourceURL, URL: "https://example.com/full.png", MediaType: "image/png"}}),
				msg("a1", agentstate.RoleAssistant, reasoning("The nav sits at y=0; crop the top band.", []byte{0x01, 0x02, 0xfe, 0xff}), text("Let me crop the header."),
					call("call_1", "crop", `{"box":[0,0,800,120]}`), call("call_2", "ping", `not json`)),
				msg("t1", agentstate.RoleTool, result("call_1", "crop", "cropped: 800x120", false), result("call_2", "ping", "ping: tool offline", true)),
				{ID: "e1", Role: agentstate.RoleSystem, Kind: agentstate.KindEvent, Parts: []agentstate.Part{text("[event] The user uploaded a second screenshot.")}},
				msg("a2", agentstate.RoleAssistant, reasoning("", []byte("redacted-bytes")), text("Yes: the nav overlaps the logo by 12px.")),
				msg("u2", agentstate.RoleUser, text("Thanks, how do I fix it?")),
			},
		},
	}
}

// leadingAssistantState starts with the assistant, as a greeting bot's log does.
func leadingAssistantState() *agentstate.State {
	return &agentstate.State{
		SchemaVersion: agentstate.CurrentSchemaVersion,
		Model:         agentstate.ModelSpec{Name: "llama3.1:8b"},
		Context: agentstate.Context{Messages: []agentstate.Message{
			msg("a0", agentstate.RoleAssistant, text("Hi! What can I do for you?")),
			msg("u1", agentstate.RoleUser, text("Book a table for two.")),
		}},
	}
}

// normalizedWork is the view the render stage sees: the state's log after
// normalization, with a fixed budget.
func normalizedWork(st *agentstate.State) *policies.Work {
	w := statetest.Work(st)
	normalize.Normalize(w, &normalize.Config{})
	w.Budget = &agentstate.Budget{ContextWindow: 32768, ReservedOutput: 2048}
	return w
}

// input is what the render stage passes for w.
func input(w *policies.Work) Input {
	return Input{State: w.State(), Model: w.Model(), Budget: w.Budget, View: w.Entries}
}

func prettyJSON(t testing.TB, body []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	return b.String() + "\n"
}

package eval

import (
	"encoding/json"
	"fmt"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// requestBody is what eval reads of an OpenAI Chat Completions or Anthropic
// Messages request body.
type requestBody struct {
	Model    string            `json:"model"`
	System   json.RawMessage   `json:"system"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
}

// readRequestBodies reads a list of request bodies, one per line, as a proxy
// sees them, and takes the conversation of the last body with the most
// messages: a client resends the whole conversation with every call, so that
// body holds every turn, and replaying it turn by turn measures it like any
// session (every body is still checked, and a bad one named by its line).
func readRequestBodies(lines []rawLine, f Format) (*conversation, error) {
	var best requestBody
	bestLine := 0
	for _, l := range lines {
		var body requestBody
		if err := decodeObject(l, &body); err != nil {
			return nil, err
		}
		if body.Messages == nil {
			return nil, lineErr(l.n, "messages", "required: a %s request body", f)
		}
		if len(body.Messages) >= len(best.Messages) {
			best, bestLine = body, l.n
		}
	}
	if bestLine == 0 {
		return nil, lineErr(1, "", "the file holds no request body")
	}
	if best.Model == "" {
		return nil, lineErr(bestLine, "model", "required")
	}
	c := &conversation{model: best.Model}
	var err error
	if f == FormatAnthropic {
		err = c.anthropicBody(best, bestLine)
	} else {
		err = c.chatBody(best, bestLine)
	}
	return c, err
}

// toolDefinition reads an Anthropic tool ({name, description, input_schema})
// or an OpenAI one ({type: function, function: {name, description,
// parameters}}).
func toolDefinition(raw json.RawMessage) (*ctxcv1.ToolDefinition, error) {
	var t struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
		Function    *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	if t.Function != nil {
		t.Name, t.Description, t.InputSchema = t.Function.Name, t.Function.Description, t.Function.Parameters
	}
	if t.Name == "" {
		return nil, fmt.Errorf("no name")
	}
	td := &ctxcv1.ToolDefinition{Name: t.Name, Description: t.Description}
	if len(t.InputSchema) > 0 {
		td.ParametersJson = compactJSON(t.InputSchema)
	}
	return td, nil
}

func (c *conversation) readTools(tools []json.RawMessage, line int) error {
	for i, raw := range tools {
		td, err := toolDefinition(raw)
		if err != nil {
			return lineErr(line, fmt.Sprintf("tools[%d]", i), "%v", err)
		}
		c.tools = append(c.tools, td)
	}
	return nil
}

func (c *conversation) anthropicBody(body requestBody, line int) error {
	system, ok := contentText(body.System)
	if !ok {
		return lineErr(line, "system", "neither a string nor an array of text blocks")
	}
	c.systemPrompt = system
	if err := c.readTools(body.Tools, line); err != nil {
		return err
	}
	names := map[string]string{}
	for i, raw := range body.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return lineErr(line, field, "%v", err)
		}
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return lineErr(line, field+".content", "%v", err)
		}
		switch m.Role {
		case "system":
			// Claude Code sends its environment as a system message.
			text, _ := contentText(m.Content)
			c.systemPrompt = strings.TrimPrefix(c.systemPrompt+"\n\n"+text, "\n\n")
		case "assistant":
			msg, err := anthropicAssistant(blocks, names, line, field)
			if err != nil {
				return err
			}
			c.messages = append(c.messages, msg)
		case "user":
			msgs, err := anthropicUser(blocks, names, line, field, false)
			if err != nil {
				return err
			}
			c.messages = append(c.messages, msgs...)
		default:
			return lineErr(line, field+".role", "%q is not user, assistant or system", m.Role)
		}
	}
	return nil
}

func (c *conversation) chatBody(body requestBody, line int) error {
	if err := c.readTools(body.Tools, line); err != nil {
		return err
	}
	names := map[string]string{}
	var system []string
	for i, raw := range body.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		var m struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return lineErr(line, field, "%v", err)
		}
		text, ok := contentText(m.Content)
		if !ok {
			return lineErr(line, field+".content", "neither a string nor an array of content parts")
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			c.messages = append(c.messages, convMessage{line: line, kind: "user", text: text})
		case "assistant":
			msg := convMessage{line: line, kind: "assistant", text: text}
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Function.Name == "" {
					return lineErr(line, fmt.Sprintf("%s.tool_calls[%d]", field, j), "a tool call needs an id and a function name")
				}
				names[tc.ID] = tc.Function.Name
				args := tc.Function.Arguments
				if args == "" {
					args = "{}"
				}
				msg.calls = append(msg.calls, &ctxcv1.ToolCall{Id: tc.ID, Name: tc.Function.Name, ArgumentsJson: args})
			}
			c.messages = append(c.messages, msg)
		case "tool":
			if m.ToolCallID == "" {
				return lineErr(line, field+".tool_call_id", "required on a tool message")
			}
			// Chat Completions has no error flag: a result is an error when
			// its output says a command failed (exitFailure).
			c.messages = append(c.messages, convMessage{line: line, kind: "tool", results: []*ctxcv1.ToolResult{{ToolCallId: m.ToolCallID, Name: names[m.ToolCallID], Content: text, IsError: exitFailure(text)}}})
		default:
			return lineErr(line, field+".role", "%q is not system, developer, user, assistant or tool", m.Role)
		}
	}
	c.systemPrompt = strings.Join(system, "\n\n")
	return nil
}

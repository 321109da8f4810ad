//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// shellTool is how one CLI's shell tool takes a command: its name in the
// request's tools, and its arguments for a command run in the workspace.
type shellTool struct {
	name string
	args func(cmd, ws string, step int) map[string]any
}

// shellTools are the CLIs' shell tools, found by name among the tools a
// request offers: Claude Code's Bash, Codex's exec_command, Gemini CLI's
// run_shell_command, pi's bash.
var shellTools = []shellTool{
	{"Bash", func(cmd, _ string, step int) map[string]any {
		return map[string]any{"command": cmd, "description": fmt.Sprintf("Run check %d", step)}
	}},
	{"exec_command", func(cmd, ws string, _ int) map[string]any {
		return map[string]any{"cmd": cmd, "workdir": ws, "yield_time_ms": 10000}
	}},
	{"run_shell_command", func(cmd, _ string, step int) map[string]any {
		return map[string]any{"command": cmd, "description": fmt.Sprintf("Run check %d", step)}
	}},
	{"bash", func(cmd, _ string, _ int) map[string]any { return map[string]any{"command": cmd} }},
}

// offeredTools are the names of the tools a request body offers, in any of
// the providers' shapes: Anthropic's and Responses' name, Chat Completions'
// function.name, Gemini's functionDeclarations.
func offeredTools(body []byte) []string {
	var req struct {
		// A tool of any of the shapes: wire.ResponsesTool's name is
		// Anthropic's too; Gemini's API also takes function_declarations.
		Tools []struct {
			wire.ResponsesTool
			Function wire.OpenAIFunctionDecl `json:"function"`
			wire.GeminiTool
			DeclarationsSnake []wire.GeminiFunctionDeclaration `json:"function_declarations"`
		} `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var names []string
	for _, t := range req.Tools {
		for _, n := range []string{t.Name, t.Function.Name} {
			if n != "" {
				names = append(names, n)
			}
		}
		for _, d := range append(t.FunctionDeclarations, t.DeclarationsSnake...) {
			names = append(names, d.Name)
		}
	}
	return names
}

// findShellTool is the shell tool a request offers, or nil: a request
// without one is not the agent's loop (a title, a summary, a check of the
// CLI's own).
func findShellTool(body []byte) *shellTool {
	names := offeredTools(body)
	for i := range shellTools {
		for _, n := range names {
			if n == shellTools[i].name {
				return &shellTools[i]
			}
		}
	}
	return nil
}

// longTaskState is where a request of the task stands: the prompt it works
// on (-1: not the task's loop) and the highest step it holds a call of.
type longTaskState struct {
	prompt, step int
}

// stepPattern matches the plan's command with its step number.
func (p *longTaskPlan) stepPattern() *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(p.Command) + ` (\d+)\b`)
}

// state reads where a request stands. The model must not count tool
// results (ctxc may have condensed or summarized older calls and outputs),
// so the step is the highest number any call of the command in the request
// carries: the newest call and its result are always kept. The prompt is
// the last whose marker the request holds; when ctxc summarized the first
// prompt away, a step call still says the task is under way.
func (p *longTaskPlan) state(body []byte) longTaskState {
	st := longTaskState{prompt: -1}
	for _, m := range p.stepPattern().FindAllSubmatch(body, -1) {
		if n, err := strconv.Atoi(string(m[1])); err == nil && n > st.step && n <= p.Ends[len(p.Ends)-1] {
			st.step = n
		}
	}
	for i, marker := range p.Markers {
		if bytes.Contains(body, jsonText(marker)) {
			st.prompt = i
		}
	}
	if st.prompt < 0 && st.step > 0 {
		st.prompt = 0
	}
	return st
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}

// isLoop says whether a request is the agent's loop on the task: it offers
// the shell tool, is on one of the task's prompts, and ends with a tool's
// result or with the prompt itself. A request whose last message holds any
// other text of the user's is the CLI's own (a summary of the conversation
// it compacts, a title), even with the tools and the task in it.
func (p *longTaskPlan) isLoop(body []byte) bool {
	if findShellTool(body) == nil || p.state(body).prompt < 0 {
		return false
	}
	result, texts := lastMessage(body)
	prompted := false
	for _, text := range texts {
		if !slices.ContainsFunc(p.Markers, func(m string) bool { return strings.Contains(text, m) }) {
			return false
		}
		prompted = true
	}
	return result || prompted
}

// lastMessage reads a request body's last message, in any provider's
// shape, past the CLI's own system messages (Claude Code's environment
// comes after the prompt): whether it holds a tool's result (a Chat
// Completions tool message, an Anthropic tool_result block, a Responses
// function_call_output, a Gemini functionResponse), and its texts but those
// a CLI wraps in a tag of its own (<system-reminder>, <session_context>,
// <environment_context>).
func lastMessage(body []byte) (result bool, texts []string) {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Input    json.RawMessage   `json:"input"`
		Contents []json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false, nil
	}
	var input []json.RawMessage
	_ = json.Unmarshal(req.Input, &input)
	// A message of any of the shapes: a Responses item's role, type and
	// content are Chat's and Anthropic's too; Gemini's content has parts.
	type message struct {
		wire.ResponsesItem
		Parts []wire.GeminiPart `json:"parts"`
	}
	var m message
	for _, list := range [][]json.RawMessage{req.Messages, input, req.Contents} {
		for i := len(list) - 1; i >= 0; i-- {
			var each message
			if json.Unmarshal(list[i], &each) == nil && each.Role != "system" && each.Role != "developer" {
				m = each
				break
			}
		}
	}
	result = m.Role == "tool" || strings.HasSuffix(m.Type, "_output")
	var all []string
	for _, part := range m.Parts {
		result = result || part.FunctionResponse != nil
		if part.Text != nil {
			all = append(all, *part.Text)
		}
	}
	var content string
	if json.Unmarshal(m.Content, &content) == nil && m.Role != "tool" {
		all = append(all, content)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &blocks)
	for _, block := range blocks {
		result = result || block.Type == "tool_result"
		// A Chat Completions tool message's blocks (Qwen Code's) are
		// the tool's output, not text of the user's.
		if (block.Type == "text" || block.Type == "input_text") && m.Role != "tool" {
			all = append(all, block.Text)
		}
	}
	for _, text := range all {
		if text = strings.TrimSpace(text); text != "" && !strings.HasPrefix(text, "<") {
			texts = append(texts, text)
		}
	}
	return result, texts
}

// longTaskModel is the scripted model of a long task in workspace ws. The
// agent's loop gets the next step's call (step+1, never before the first
// step of the prompt it is on), then, once the prompt's last step is in the
// request, the prompt's answer. Anything else gets a short text.
func longTaskModel(p *longTaskPlan, ws string) modelScript {
	return func(req upstreamRequest) modelTurn {
		if answer, ok := schemaAnswer(req.Body); ok {
			return modelTurn{Text: answer}
		}
		if !p.isLoop(req.Body) {
			return modelTurn{Text: "Working on the failing checks."}
		}
		tool, st := findShellTool(req.Body), p.state(req.Body)
		next := st.step + 1
		if st.prompt > 0 {
			next = max(next, p.Ends[st.prompt-1]+1)
		}
		if next > p.Ends[st.prompt] {
			return modelTurn{Text: p.Answers[st.prompt]}
		}
		return modelTurn{Calls: []agentstate.ToolCall{{Name: tool.name, ArgumentsJSON: string(mustJSON(tool.args(p.stepCommand(next), ws, next)))}}}
	}
}

// schemaAnswer answers a request that asks for JSON of a schema (Gemini
// CLI's check for a conversation stuck in a loop, with a Gemini
// responseJsonSchema) with the schema's least object: every property empty,
// zero or false. A text would not parse, and the CLI would retry it ten
// times with backoff.
func schemaAnswer(body []byte) (string, bool) {
	var req wire.GeminiRequest
	if json.Unmarshal(body, &req) != nil || req.GenerationConfig == nil {
		return "", false
	}
	var schema map[string]any
	for _, raw := range []json.RawMessage{req.GenerationConfig.ResponseJSONSchema, req.GenerationConfig.ResponseSchema} {
		if schema == nil && len(raw) > 0 && json.Unmarshal(raw, &schema) != nil {
			return "", false
		}
	}
	if schema == nil {
		return "", false
	}
	return string(mustJSON(leastValue(schema))), true
}

// leastValue is the emptiest value of a JSON schema's type.
func leastValue(schema map[string]any) any {
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if sub, ok := p.(map[string]any); ok {
				out[name] = leastValue(sub)
			}
		}
		return out
	case "array":
		return []any{}
	case "number", "integer":
		return 0
	case "boolean":
		return false
	}
	return ""
}

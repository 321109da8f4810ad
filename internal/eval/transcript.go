package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Format is the format of a session file.
type Format string

// The formats eval reads (the package doc describes each and its mapping).
const (
	// FormatAuto detects the format from the file's first lines.
	FormatAuto Format = ""
	// FormatCtxc is eval's own session JSONL.
	FormatCtxc Format = "ctxc"
	// FormatClaudeCode is a Claude Code session transcript
	// (<config>/projects/<cwd>/<session>.jsonl).
	FormatClaudeCode Format = "claude-code"
	// FormatCodex is a Codex CLI rollout (<CODEX_HOME>/sessions/…/rollout-….jsonl).
	FormatCodex Format = "codex"
	// FormatOpenAIChat is a list of OpenAI Chat Completions request bodies,
	// one per line.
	FormatOpenAIChat Format = "openai-chat"
	// FormatAnthropic is a list of Anthropic Messages request bodies, one per line.
	FormatAnthropic Format = "anthropic"
	// FormatGeminiCLI is a Gemini CLI chat file
	// (<home>/.gemini/tmp/<project>/chats/session-….jsonl).
	FormatGeminiCLI Format = "gemini-cli"
)

// Formats lists the formats a file may be forced to, for flags and messages.
var Formats = []Format{FormatCtxc, FormatClaudeCode, FormatCodex, FormatGeminiCLI, FormatOpenAIChat, FormatAnthropic}

// ParseFormat reads a --format value ("auto" or "" detects).
func ParseFormat(s string) (Format, error) {
	if s == "" || s == "auto" {
		return FormatAuto, nil
	}
	for _, f := range Formats {
		if Format(s) == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("%q is not auto or one of %s", s, FormatNames())
}

// FormatNames lists Formats, comma-separated, for flags and messages.
func FormatNames() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// detectLines is how many non-blank lines detection reads.
const detectLines = 5

// LoadAny reads a session file of format f, or of the format its first lines
// show when f is FormatAuto, and returns the session and the format read.
// Transcripts and request lists become route lines (see the package doc); a
// line that cannot be read is an error naming its number and field.
func LoadAny(r io.Reader, name string, f Format) (*Session, Format, error) {
	return loadAny(r, name, f, MaxLineBytes)
}

func loadAny(r io.Reader, name string, f Format, maxLine int) (*Session, Format, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, f, err
	}
	if f == FormatCtxc {
		s, err := load(bytes.NewReader(data), name, maxLine)
		return s, f, err
	}
	br := bufio.NewReaderSize(bytes.NewReader(data), 1<<20)
	var lines []rawLine
	for n := 1; ; n++ {
		raw, err := readLine(br, maxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, f, fmt.Errorf("line %d: %w", n, err)
		}
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 {
			lines = append(lines, rawLine{n: n, data: trimmed})
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if f == FormatAuto {
		if f, err = detect(lines); err != nil {
			return nil, f, err
		}
	}
	var conv *conversation
	switch f {
	case FormatCtxc:
		s, err := load(bytes.NewReader(data), name, maxLine)
		return s, f, err
	case FormatClaudeCode:
		conv, err = readClaudeCode(lines)
	case FormatCodex:
		conv, err = readCodex(lines)
	case FormatGeminiCLI:
		conv, err = readGeminiCLI(lines)
	case FormatOpenAIChat, FormatAnthropic:
		conv, err = readRequestBodies(lines, f)
	default:
		return nil, f, fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return nil, f, err
	}
	s, err := conv.session(name, f)
	return s, f, err
}

type rawLine struct {
	n    int
	data []byte
}

// detect names the format of a file from its first non-blank lines: eval's
// own header {"session": …}; Claude Code's lines, objects with "type" and
// "sessionId"; Codex's, objects with "type" and "payload" (the first a
// session_meta); Gemini CLI's, a first line with "sessionId" and
// "projectHash" and no "type"; request bodies, objects with "messages" (Anthropic's when
// one has a top-level "system", "anthropic_version" or a tool_use,
// tool_result or thinking block; else OpenAI's).
func detect(lines []rawLine) (Format, error) {
	if len(lines) == 0 {
		return "", lineErr(1, "", "the file is empty")
	}
	for i, l := range lines {
		if i == detectLines {
			break
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(l.data, &probe); err != nil {
			return "", lineErr(l.n, "", "not a JSON object, so the format cannot be detected (--format names it): %v", err)
		}
		_, typ := probe["type"]
		_, sessionID := probe["sessionId"]
		_, payload := probe["payload"]
		_, messages := probe["messages"]
		_, projectHash := probe["projectHash"]
		switch {
		case probe["session"] != nil:
			return FormatCtxc, nil
		case sessionID && projectHash && !typ:
			return FormatGeminiCLI, nil
		case typ && sessionID:
			return FormatClaudeCode, nil
		case typ && payload:
			return FormatCodex, nil
		case messages:
			if anthropicBody(probe) {
				return FormatAnthropic, nil
			}
			return FormatOpenAIChat, nil
		}
	}
	return "", lineErr(lines[0].n, "", "the format is none of %v (looked at the first %d lines; --format names it)", Formats, min(len(lines), detectLines))
}

// conversation is a transcript in a form common to every reader: messages in
// order, each remembering the line it came from.
type conversation struct {
	id           string
	model        string
	systemPrompt string
	tools        []*ctxcv1.ToolDefinition
	messages     []convMessage
}

// convMessage is one message of a transcript.
type convMessage struct {
	line int
	// kind is user (a user turn), assistant, tool (results) or event
	// (context that is neither: environment blocks, compaction summaries).
	kind      string
	text      string
	reasoning string
	calls     []*ctxcv1.ToolCall
	results   []*ctxcv1.ToolResult
}

func textPart(s string) *ctxcv1.Part { return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}} }

// session maps the conversation to route lines: a user message is a
// user_turn; an assistant message with tool calls, with the tool results
// that follow it, is a step finished by tool calls; one without calls is a
// step that ends the execution (a final answer); an event is an event.
// Tool results with no call before them in the same step join the step they
// follow. Line numbers are the transcript's.
func (c *conversation) session(name string, f Format) (*Session, error) {
	if c.model == "" {
		return nil, lineErr(1, "model", "no line of the %s transcript names the model", f)
	}
	// The file names the session (a transcript's own id is a UUID), and
	// the description keeps the transcript's id.
	desc := fmt.Sprintf("read from a %s transcript", f)
	if c.id != "" {
		desc += " of session " + c.id
	}
	s := &Session{Name: name, Header: Header{ID: strings.TrimSuffix(baseName(name), ".jsonl"), Model: &ctxcv1.ModelSpec{Name: c.model},
		SystemPrompt: c.systemPrompt, Tools: c.tools, Description: desc}}
	var step *ctxcv1.AgentStep
	stepLine := 0
	flush := func() {
		if step != nil {
			s.Lines = append(s.Lines, Line{Route: &ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: step}}, Number: stepLine})
			step = nil
		}
	}
	for _, m := range c.messages {
		switch m.kind {
		case "user":
			flush()
			msg := &ctxcv1.Message{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{textPart(m.text)}}
			s.Lines = append(s.Lines, Line{Route: &ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{msg}}}}, Number: m.line})
		case "event":
			flush()
			s.Lines = append(s.Lines, Line{Route: &ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: m.text}}}, Number: m.line})
		case "assistant":
			flush()
			msg := &ctxcv1.Message{Role: ctxcv1.Role_ROLE_ASSISTANT}
			if m.reasoning != "" {
				msg.Parts = append(msg.Parts, &ctxcv1.Part{Content: &ctxcv1.Part_Reasoning{Reasoning: &ctxcv1.Reasoning{Text: m.reasoning}}})
			}
			if m.text != "" {
				msg.Parts = append(msg.Parts, textPart(m.text))
			}
			for _, call := range m.calls {
				msg.Parts = append(msg.Parts, &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: call}})
			}
			if len(msg.Parts) == 0 {
				continue // an empty message (a turn that only thought) adds nothing
			}
			finish := ctxcv1.FinishReason_FINISH_REASON_STOP
			if len(m.calls) > 0 {
				finish = ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS
			}
			step, stepLine = &ctxcv1.AgentStep{Messages: []*ctxcv1.Message{msg}, FinishReason: finish}, m.line
			if len(m.calls) == 0 {
				flush()
			}
		case "tool":
			if step == nil || step.GetFinishReason() != ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS {
				return nil, lineErr(m.line, "", "a tool result that follows no tool call")
			}
			for _, r := range m.results {
				step.Messages = append(step.Messages, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolResult{ToolResult: r}}}})
			}
		}
	}
	flush()
	if len(s.Lines) == 0 {
		return nil, lineErr(1, "", "the %s transcript holds no user turn, agent step or event", f)
	}
	for _, l := range s.Lines {
		if l.Route.GetEvent() != nil {
			continue // context may come first (Codex's environment block)
		}
		if l.Route.GetUserTurn() == nil {
			return nil, lineErr(l.Number, "", "the conversation must start with a user message")
		}
		break
	}
	return s, nil
}

func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		return name[i+1:]
	}
	return name
}

// decodeObject decodes one transcript line, naming it when it is not JSON.
func decodeObject(l rawLine, v any) error {
	if err := json.Unmarshal(l.data, v); err != nil {
		return lineErr(l.n, "", "not a JSON object: %v", err)
	}
	return nil
}

// contentText reads content that is a string or an array of blocks with
// text (text, input_text, output_text), joining the texts with newlines.
// Blocks without text (images) are left out.
func contentText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	if raw[0] == '"' {
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var texts []string
	for _, b := range blocks {
		if b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), true
}

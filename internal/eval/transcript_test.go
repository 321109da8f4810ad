package eval

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

const transcripts = "../../examples/transcripts/"

func loadTranscript(t *testing.T, name string) (*Session, Format) {
	t.Helper()
	f, err := os.Open(transcripts + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, format, err := LoadAny(f, name, FormatAuto)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s, format
}

// transcriptShape is what a reader made of a transcript, for comparison.
type transcriptShape struct {
	Format     Format
	Model      string
	Turns      int
	FirstTask  string
	HasSystem  bool
	Tools      int
	FailedSeen []string // outputs of failed tool results that must be there, flagged
}

// The committed transcripts, recorded from the real agents, read into the
// session they hold: every user turn, and the failed tool results flagged as
// errors with the compiler's and test runner's own output.
func TestReadCommittedTranscripts(t *testing.T) {
	const firstTask = "The build has been broken since yesterday's merge. Run go build ./..., find out why and fix it. We have to stay on Go 1.22, so don't touch the go directive in go.mod."
	buildErr := `internal/config/config.go:7:2: "os" imported and not used`
	vetErr := "internal/report/report.go:17:35: fmt.Fprintf format %d has arg title of wrong type string"
	race := "WARNING: DATA RACE"
	tests := []struct {
		file string
		want transcriptShape
	}{
		{"claude-code-12.jsonl", transcriptShape{Format: FormatClaudeCode, Model: "claude-opus-5-5", Turns: 12, FirstTask: firstTask, FailedSeen: []string{buildErr, vetErr, race}}},
		{"claude-code-40.jsonl", transcriptShape{Format: FormatClaudeCode, Model: "claude-opus-5-5", Turns: 40, FirstTask: firstTask,
			FailedSeen: []string{buildErr, vetErr, race, "panic: test timed out after 10s", "--- FAIL: TestCreateInvoiceBadJSON", "staticcheck: command not found"}}},
		{"codex-12.jsonl", transcriptShape{Format: FormatCodex, Model: "gpt-5.5", Turns: 12, FirstTask: firstTask, HasSystem: true, FailedSeen: []string{buildErr, vetErr, race}}},
		{"codex-40.jsonl", transcriptShape{Format: FormatCodex, Model: "gpt-5.5", Turns: 40, FirstTask: firstTask, HasSystem: true,
			FailedSeen: []string{buildErr, vetErr, race, "panic: test timed out after 10s", "--- FAIL: TestCreateInvoiceBadJSON", "staticcheck: command not found"}}},
		{"claude-code-12.requests.jsonl", transcriptShape{Format: FormatAnthropic, Model: "claude-opus-5-5", Turns: 12, HasSystem: true, Tools: 12, FailedSeen: []string{buildErr, vetErr, race}}},
		{"openai-chat.requests.jsonl", transcriptShape{Format: FormatOpenAIChat, Model: "gpt-4o", Turns: 4, FirstTask: firstTask, HasSystem: true, Tools: 4, FailedSeen: []string{buildErr, vetErr}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, format := loadTranscript(t, tt.file)
			got := transcriptShape{Format: format, Model: s.Header.Model.GetName(), Turns: s.Turns(), HasSystem: s.Header.SystemPrompt != "", Tools: len(s.Header.Tools)}
			var failed []string
			for _, l := range s.Lines {
				if ut := l.Route.GetUserTurn(); ut != nil && got.FirstTask == "" {
					got.FirstTask = messageText(ut.GetMessages()[0])
				}
				for _, m := range l.Route.GetStep().GetMessages() {
					for _, p := range m.GetParts() {
						if r := p.GetToolResult(); r != nil && r.GetIsError() {
							failed = append(failed, r.GetContent())
						}
					}
				}
			}
			all := strings.Join(failed, "\n")
			for _, want := range tt.want.FailedSeen {
				if strings.Contains(all, want) {
					got.FailedSeen = append(got.FailedSeen, want)
				}
			}
			got.FirstTask = strings.TrimSpace(got.FirstTask)
			if tt.want.FirstTask == "" {
				// A request body's first user message carries Claude Code's
				// reminders before the task.
				if !strings.Contains(got.FirstTask, firstTask) {
					t.Errorf("the first user turn lacks the task: %.200q", got.FirstTask)
				}
				got.FirstTask = ""
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// The facts found in a transcript without listed facts: the identifying
// lines of its failed tool results, its user requirements, its identifiers.
func TestFactsFoundInATranscript(t *testing.T) {
	s, _ := loadTranscript(t, "claude-code-12.jsonl")
	byText := map[string]Fact{}
	for _, f := range autoFacts(s) {
		byText[f.Text] = f
	}
	want := []Fact{
		{Kind: FactErrorCode, Text: `internal/config/config.go:7:2: "os" imported and not used`, Turn: 1},
		{Kind: FactErrorCode, Text: "internal/config/config.go:20:14: undefined: decodeConfig", Turn: 1},
		{Kind: FactErrorCode, Text: "panic: runtime error: index out of range [1] with length 1 [recovered, repanicked]", Turn: 3},
		{Kind: FactErrorCode, Text: "--- FAIL: TestParseQuantity", Turn: 3},
		{Kind: FactErrorCode, Text: "WARNING: DATA RACE", Turn: 9},
		{Kind: FactErrorCode, Text: "internal/ledger/ledger.go:27:17: Snapshot passes lock by value: example.com/invoicer/internal/counter.Counter contains sync.Mutex", Turn: 10},
		{Kind: FactConstraint, Text: "We have to stay on Go 1.22, so don't touch the go directive in go.mod", Turn: 1},
		{Kind: FactConstraint, Text: "No panics in library code", Turn: 5},
		{Kind: FactConstraint, Text: "never copy a Counter, always pass a pointer", Turn: 11},
		{Kind: FactConstraint, Text: "The commit message must reference ticket INV-142", Turn: 12},
		{Kind: FactOther, Text: "INV-142", Turn: 12},
		{Kind: FactOther, Text: "internal/config/config.go", Turn: 1},
	}
	for _, w := range want {
		w.ID = w.Text
		if d := cmp.Diff(w, byText[w.Text]); d != "" {
			t.Errorf("fact %q (-want +got):\n%s", w.Text, d)
		}
	}
	// A passing run's output plants no failure line.
	for text, f := range byText {
		if f.Kind == FactErrorCode && strings.HasPrefix(text, "ok ") {
			t.Errorf("a passing line became a failure fact: %q", text)
		}
	}
}

func TestFailureLines(t *testing.T) {
	tests := []struct {
		name, out string
		want      []string
	}{
		{"go build", "Exit code 1\n# example.com/invoicer/internal/config\ninternal/config/config.go:7:2: \"os\" imported and not used\ninternal/config/config.go:29:2: declared and not used: prevLen",
			[]string{`internal/config/config.go:7:2: "os" imported and not used`, "internal/config/config.go:29:2: declared and not used: prevLen"}},
		{"go test with a panic", "--- FAIL: TestSplitLine (0.00s)\npanic: runtime error: index out of range [1] with length 1 [recovered]\n\ngoroutine 7 [running]:\n\t/usr/local/go/src/testing/testing.go:1974 +0x232\nFAIL\texample.com/invoicer/internal/parse\t0.006s",
			[]string{"--- FAIL: TestSplitLine", "panic: runtime error: index out of range [1] with length 1 [recovered]"}},
		{"test assertion", "--- FAIL: TestPercent (0.00s)\n    money_test.go:14: Percent(1999, 15) = 299, want 300",
			[]string{"--- FAIL: TestPercent", "money_test.go:14: Percent(1999, 15) = 299, want 300"}},
		{"race", "==================\nWARNING: DATA RACE\nRead at 0x00c000094188 by goroutine 9:\n  example.com/invoicer/internal/counter.(*Counter).Inc()\n      /tmp/w/internal/counter/counter.go:11 +0x3a",
			[]string{"WARNING: DATA RACE"}},
		{"python", "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nModuleNotFoundError: No module named 'yaml'",
			[]string{"ModuleNotFoundError: No module named 'yaml'"}},
		{"pytest", "FAILED tests/test_app.py::test_login - AssertionError: 401 != 200\n", []string{"FAILED tests/test_app.py::test_login"}},
		{"rustc and gcc", "src/main.rs:4:9: error[E0308]: mismatched types\nmain.c:3:5: error: implicit declaration of function 'foo'",
			[]string{"src/main.rs:4:9: error[E0308]: mismatched types", "main.c:3:5: error: implicit declaration of function 'foo'"}},
		{"envelope lines only", "FAIL\nexit status 1\nmake: *** [all] Error 2", nil},
		{"a location without a message", "\t/tmp/w/internal/ledger/ledger.go:14 +0x5c", nil},
		{"too long a line", "x.go:1:1: " + strings.Repeat("y", maxFactLine), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, failureLines(tt.out)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestRequirements(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"constraint and decision", "Fix that panic as well. No panics in library code: return an error instead and let the caller decide what to do.", []string{"No panics in library code"}},
		{"several words", "Round half up, like the accountants do. Amounts are always integer cents; never use float64 for money.",
			[]string{"Amounts are always integer cents", "never use float64 for money"}},
		{"a plain request", "Run the packages we touched with the race detector.", nil},
		{"white space collapsed", "You  must\nkeep the API.", []string{"You must"}},
		{"a client's tagged block is not the user's", "<system-reminder>\nDo not add attribution lines.\n</system-reminder>\nOnly touch internal/parse.", []string{"Only touch internal/parse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, requirements(tt.text)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		name, first string
		want        Format
	}{
		{"ctxc", `{"session": {"id": "s", "model": {"name": "m"}}}`, FormatCtxc},
		{"claude code", `{"type":"queue-operation","operation":"enqueue","sessionId":"abc"}`, FormatClaudeCode},
		{"codex", `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`, FormatCodex},
		{"gemini cli", `{"sessionId":"ec12","projectHash":"eb5e","startTime":"2026-12-02T02:14:19.367Z","kind":"main"}`, FormatGeminiCLI},
		{"anthropic by system", `{"model":"claude-x","system":"be brief","messages":[{"role":"user","content":"hi"}]}`, FormatAnthropic},
		{"anthropic by block", `{"model":"claude-x","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}]}`, FormatAnthropic},
		{"openai chat", `{"model":"gpt-4o","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`, FormatOpenAIChat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := detect([]rawLine{{n: 1, data: []byte(tt.first)}})
			if err != nil || got != tt.want {
				t.Errorf("detect = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A transcript line that cannot be read is named by its number and field.
func TestLoadAnyRejects(t *testing.T) {
	const (
		claudeUser      = `{"type":"user","sessionId":"s","message":{"role":"user","content":"fix it"}}`
		claudeAssistant = `{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go build"}}]}}`
		codexMeta       = `{"type":"session_meta","payload":{"id":"s"}}` + "\n" + `{"type":"turn_context","payload":{"model":"gpt-5.5"}}`
		codexUser       = `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}`
		geminiMeta      = `{"sessionId":"s","projectHash":"p","kind":"main"}`
	)
	tests := []struct {
		name   string
		format Format
		input  string
		want   string
	}{
		{"empty", FormatAuto, "\n\n", "line 1: the file is empty"},
		{"unknown format", FormatAuto, `{"hello": 1}`, "line 1: the format is none of"},
		{"not JSON first", FormatAuto, `{nope`, "line 1: not a JSON object, so the format cannot be detected"},
		{"claude: not JSON", FormatAuto, claudeUser + "\n{nope", "line 2: not a JSON object"},
		{"claude: no message", FormatAuto, claudeUser + "\n" + `{"type":"assistant","sessionId":"s"}`, "line 2: message: required on a assistant line"},
		{"claude: bad content", FormatAuto, claudeUser + "\n\n" + `{"type":"user","sessionId":"s","message":{"role":"user","content":7}}`, "line 3: message.content: neither a string nor an array"},
		{"claude: tool_use without id", FormatAuto, claudeUser + "\n" + `{"type":"assistant","sessionId":"s","message":{"id":"m","model":"c","content":[{"type":"text","text":"x"},{"type":"tool_use","name":"Bash"}]}}`, "line 2: message.content[1]: a tool_use block needs an id and a name"},
		{"claude: result without call id", FormatAuto, claudeUser + "\n" + claudeAssistant + "\n" + `{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}`, "line 3: message.content[0].tool_use_id: required"},
		{"claude: orphan result", FormatAuto, claudeUser + "\n" + `{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"ok"}]}}` + "\n" + claudeAssistant, "line 2: a tool result that follows no tool call"},
		{"claude: no model", FormatClaudeCode, claudeUser, "line 1: model: no line of the claude-code transcript names the model"},
		{"codex: no call id", FormatAuto, codexMeta + "\n" + codexUser + "\n" + `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}"}}`, "line 4: payload.call_id: required on a function_call"},
		{"codex: bad role", FormatAuto, codexMeta + "\n" + `{"type":"response_item","payload":{"type":"message","role":"robot","content":"x"}}`, `line 3: payload.role: "robot" is not developer, system, user or assistant`},
		{"codex: no type", FormatCodex, codexMeta + "\n" + `{"payload":{}}`, "line 3: type: required on a rollout line"},
		{"gemini: a message without id", FormatAuto, geminiMeta + "\n" + `{"type":"user","content":[{"text":"fix it"}]}`, "line 2: id: required on a message line"},
		{"gemini: bad user content", FormatAuto, geminiMeta + "\n" + `{"id":"u1","type":"user","content":7}`, "line 2: content: not an array of parts"},
		{"gemini: orphan result", FormatAuto, geminiMeta + "\n" + `{"id":"u1","type":"user","content":[{"text":"fix it"}]}` + "\n" + `{"id":"u2","type":"user","content":[{"functionResponse":{"id":"c9","name":"run_shell_command","response":{"output":"ok"}}}]}` + "\n" + `{"id":"g1","type":"gemini","content":"done","model":"gemini-2.5-flash"}`, "line 3: a tool result that follows no tool call"},
		{"gemini: no model", FormatGeminiCLI, geminiMeta + "\n" + `{"id":"u1","type":"user","content":[{"text":"fix it"}]}`, "line 1: model: no line of the gemini-cli transcript names the model"},
		{"chat: tool without call id", FormatAuto, `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"},{"role":"tool","content":"ok"}]}`, "line 1: messages[1].tool_call_id: a tool message needs the id of the call it answers"},
		{"chat: bad role", FormatOpenAIChat, `{"model":"gpt-4o","messages":[{"role":"robot","content":"hi"}]}`, `line 1: messages[0].role: unsupported role "robot" (want system, developer, user, assistant, tool or function)`},
		{"anthropic: a body without messages", FormatAuto, `{"model":"claude-x","system":"s","messages":[{"role":"user","content":"hi"}]}` + "\n" + `{"model":"claude-x"}`, "line 2: messages: required: a anthropic request body"},
		{"anthropic: no model", FormatAnthropic, `{"system":"s","messages":[{"role":"user","content":"hi"}]}`, "line 1: model: required"},
		{"anthropic: tool_use without an id", FormatAnthropic, `{"model":"c","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{}}]}]}`, "line 1: messages[1].content[0].id: a tool_use block needs an id"},
		{"anthropic: every problem named", FormatAnthropic, `{"model":"c","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","input":{}}]}]}`, "line 1: messages[1].content[0].id: a tool_use block needs an id; messages[1].content[0].name: a tool_use block needs a name"},
		{"anthropic: tool without a name", FormatAnthropic, `{"model":"c","tools":[{"description":"x"}],"messages":[{"role":"user","content":"hi"}]}`, "line 1: tools[0].name: a tool needs a name"},
		{"starts with an answer", FormatOpenAIChat, `{"model":"gpt-4o","messages":[{"role":"assistant","content":"hello"}]}`, "line 1: the conversation must start with a user message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadAny(strings.NewReader(tt.input), "x.jsonl", tt.format)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// A list of request bodies is read as its longest conversation, each tool
// result named after its call, and Chat Completions results flagged as
// errors by the exit status they report.
func TestRequestBodiesTakeTheLongestConversation(t *testing.T) {
	first := `{"model":"gpt-4o","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"build it"}]}`
	second := `{"model":"gpt-4o","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"build it"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"run_command","arguments":"{\"command\":\"go build\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"x.go:1:1: undefined: y\n[exit status 1]"},{"role":"assistant","content":"It fails."}]}`
	s, format, err := LoadAny(strings.NewReader(first+"\n"+second+"\n"+first), "calls.jsonl", FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if format != FormatOpenAIChat || s.Header.SystemPrompt != "be brief" || s.Header.ID != "calls" {
		t.Errorf("format %q, system prompt %q, id %q", format, s.Header.SystemPrompt, s.Header.ID)
	}
	if len(s.Lines) != 3 {
		t.Fatalf("%d lines, want a user turn and two steps", len(s.Lines))
	}
	step := s.Lines[1].Route.GetStep()
	want := &ctxcv1.ToolResult{ToolCallId: "c1", Name: "run_command", Content: "x.go:1:1: undefined: y\n[exit status 1]", IsError: true}
	if d := cmp.Diff(want, step.GetMessages()[1].GetParts()[0].GetToolResult(), protocmp.Transform()); d != "" || step.GetFinishReason() != ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("the tool result (-want +got):\n%s", d)
	}
	if s.Lines[2].Route.GetStep().GetFinishReason() != ctxcv1.FinishReason_FINISH_REASON_STOP || s.Lines[2].Number != 2 {
		t.Errorf("the final answer: %v", s.Lines[2])
	}
}

// An Anthropic Messages body is read as the proxy reads it (providers.Import):
// the system prompt with the system messages of the conversation after it,
// an assistant turn's thinking, text and calls (arguments compact), tool
// results named after their calls with is_error kept, and the text sent
// beside them an event.
func TestReadAnthropicRequestBody(t *testing.T) {
	body := `{"model":"claude-x","system":[{"type":"text","text":"be brief"}],"messages":[` +
		`{"role":"user","content":"fix it"},` +
		`{"role":"system","content":"env: linux"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"build first","signature":"c2ln"},{"type":"text","text":"Building."},` +
		`{"type":"tool_use","id":"t1","name":"Bash","input":{"command": "go build"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x.go:1: undefined"}],"is_error":true},` +
		`{"type":"text","text":"<system-reminder>note</system-reminder>"}]},` +
		`{"role":"assistant","content":"It fails."}]}`
	s, format, err := LoadAny(strings.NewReader(body), "body.jsonl", FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if format != FormatAnthropic || s.Header.SystemPrompt != "be brief\n\nenv: linux" {
		t.Errorf("format %q, system prompt %q", format, s.Header.SystemPrompt)
	}
	step := func(finish ctxcv1.FinishReason, msgs ...*ctxcv1.Message) *ctxcv1.RouteRequest {
		return &ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{Messages: msgs, FinishReason: finish}}}
	}
	want := []*ctxcv1.RouteRequest{
		{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{textPart("fix it")}}}}}},
		step(ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS,
			&ctxcv1.Message{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{
				{Content: &ctxcv1.Part_Reasoning{Reasoning: &ctxcv1.Reasoning{Text: "build first"}}},
				textPart("Building."),
				{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: "t1", Name: "Bash", ArgumentsJson: `{"command":"go build"}`}}}}},
			&ctxcv1.Message{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{
				{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: "t1", Name: "Bash", Content: "x.go:1: undefined", IsError: true}}}}}),
		{Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "<system-reminder>note</system-reminder>"}}},
		step(ctxcv1.FinishReason_FINISH_REASON_STOP, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{textPart("It fails.")}}),
	}
	var got []*ctxcv1.RouteRequest
	for _, l := range s.Lines {
		got = append(got, l.Route)
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("the route lines (-want +got):\n%s", d)
	}
}

func TestParseFormat(t *testing.T) {
	for _, ok := range []string{"", "auto", "ctxc", "claude-code", "codex", "gemini-cli", "openai-chat", "anthropic"} {
		if _, err := ParseFormat(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), `"xml" is not auto or one of ctxc, claude-code, codex, gemini-cli, openai-chat, anthropic`) {
		t.Errorf("xml: %v", err)
	}
}

// A Gemini CLI chat file, recorded from Gemini CLI 0.61.0 (three prompts:
// gemini -p, then gemini -p --resume latest twice): each message as last
// written, the session's context block an event, every call once with its
// result, though the resumed session set the whole list again twice with
// every function response doubled, and a result an error when its output
// ends with a non-zero exit code.
func TestReadGeminiCLIChat(t *testing.T) {
	f, err := os.Open("testdata/gemini-cli-3.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, format, err := LoadAny(f, "gemini-cli-3.jsonl", FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	type shape struct {
		Format            Format
		Model             string
		Turns             int
		FirstTask         string
		Events            int
		Calls, Results    int
		Failed, ExitCodes int
		Orphans           []string
	}
	got := shape{Format: format, Model: s.Header.Model.GetName(), Turns: s.Turns()}
	calls := map[string]bool{}
	for _, l := range s.Lines {
		r := l.Route
		if ut := r.GetUserTurn(); ut != nil && got.FirstTask == "" {
			got.FirstTask = strings.TrimSpace(messageText(ut.GetMessages()[0]))
		}
		if r.GetEvent() != nil {
			got.Events++
		}
		for _, m := range r.GetStep().GetMessages() {
			for _, p := range m.GetParts() {
				if c := p.GetToolCall(); c != nil {
					got.Calls++
					calls[c.GetId()] = true
				}
				if res := p.GetToolResult(); res != nil {
					got.Results++
					if !calls[res.GetToolCallId()] {
						got.Orphans = append(got.Orphans, res.GetToolCallId())
					}
					if res.GetIsError() {
						got.Failed++
					}
					if exitFailure(res.GetContent()) {
						got.ExitCodes++
					}
				}
			}
		}
	}
	// Checks 1 to 4, 5 and 6, 7 to 9: nine calls; the file's outputs end
	// with "Exit Code: 1" twice.
	want := shape{Format: FormatGeminiCLI, Model: "gemini-2.5-flash", Turns: 3,
		FirstTask: "Morning! I'm on ./inventory today and could use a hand with its checks, start with the first few and tell me what breaks.",
		Events:    1, Calls: 9, Results: 9, Failed: 2, ExitCodes: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

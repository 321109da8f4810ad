package compiler

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
	"github.com/contextcompiler/ctxc/internal/compiler/routing"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// newService is the service over the fake catalog and counters.
func newService(t *testing.T, cat *compilertest.Catalog, limits Limits) (*Service, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	s, err := New(Config{Catalog: cat, Counters: compilertest.Counters{}, Limits: limits, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s, &logs
}

func text(id string, role agentstate.Role, s string) agentstate.Message {
	return agentstate.Message{ID: id, Role: role, Parts: []agentstate.Part{agentstate.TextPart(s)}}
}

// state is a two-message gpt-4o state with a system prompt and a tool.
func state() *agentstate.State {
	return &agentstate.State{
		SchemaVersion: agentstate.CurrentSchemaVersion,
		Model:         agentstate.ModelSpec{Name: "gpt-4o", Provider: "openai"},
		Context: agentstate.Context{
			SystemPrompt: "You are {{role}}.",
			Tools:        []agentstate.ToolDefinition{{Name: "search"}},
			Messages:     []agentstate.Message{text("u1", agentstate.RoleUser, "hi"), text("a1", agentstate.RoleAssistant, "hello")},
		},
	}
}

// unlocked is state() without a provider.
func unlocked() *agentstate.State {
	st := state()
	st.Model.Provider = ""
	return st
}

// foreignState is state() of a schema version this build does not read.
func foreignState() *agentstate.State {
	st := state()
	st.SchemaVersion = agentstate.CurrentSchemaVersion + 6
	return st
}

func TestNewNeedsItsDependencies(t *testing.T) {
	if _, err := New(Config{Counters: compilertest.Counters{}}); err == nil {
		t.Error("New without a catalog succeeded")
	}
	s, err := New(Config{Catalog: compilertest.NewCatalog(), Counters: compilertest.Counters{}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DefaultLimits(), s.Limits()); diff != "" {
		t.Errorf("zero limits are the defaults (-want +got):\n%s", diff)
	}
}

// TestCompileInput: what only Compile carries (a conversation in a provider's
// format, template variables) reaches the pipeline, within the limits.
func TestCompileInput(t *testing.T) {
	openAI := func(body string) *ProviderInput {
		return &ProviderInput{Format: agentstate.RenderOpenAI, Body: []byte(body)}
	}
	type ran struct {
		SystemPrompt string
		Tools        []string
		Messages     []string
	}
	tests := []struct {
		name      string
		limits    Limits
		req       CompileRequest
		want      ran
		wantErr   error
		wantField string
	}{
		{
			name: "the state as it is",
			req:  CompileRequest{},
			want: ran{SystemPrompt: "You are {{role}}.", Tools: []string{"search"}, Messages: []string{"u1", "a1"}},
		},
		{
			name: "templates expand",
			req:  CompileRequest{TemplateVariables: map[string]string{"role": "a guide"}, RequestBytes: 100},
			want: ran{SystemPrompt: "You are a guide.", Tools: []string{"search"}, Messages: []string{"u1", "a1"}},
		},
		{
			name: "provider input replaces the log, the prompt and the tools",
			req: CompileRequest{Input: openAI(`{"messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"hi"}],
				"tools":[{"type":"function","function":{"name":"fetch","parameters":{"type":"object"}}}]}`)},
			want: ran{SystemPrompt: "Be terse.", Tools: []string{"fetch"}, Messages: []string{"in-1"}},
		},
		{
			name: "provider input without a prompt or tools keeps the state's",
			req:  CompileRequest{Input: openAI(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`)},
			want: ran{SystemPrompt: "You are {{role}}.", Tools: []string{"search"}, Messages: []string{"in-1", "in-2"}},
		},
		{
			name:      "provider input that does not parse",
			req:       CompileRequest{Input: openAI(`{"messages":`)},
			wantField: "input_json",
		},
		{
			name:    "provider input over the message limit",
			limits:  Limits{MaxMessages: 1, MaxPartsPerMessage: 1, MaxTools: 1, MaxMessageBytes: 1 << 20},
			req:     CompileRequest{Input: openAI(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`)},
			wantErr: &agentstate.LimitError{Field: "input_json.messages", Limit: 1, Got: 2, AtLeast: true},
		},
		{
			// What follows the first message past the limit is not JSON:
			// read, it would be INVALID_INPUT; counting stopped before it.
			name:    "provider input over the message limit, counting stopped there",
			limits:  Limits{MaxMessages: 1, MaxPartsPerMessage: 1, MaxTools: 1, MaxMessageBytes: 1 << 20},
			req:     CompileRequest{Input: openAI(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},` + strings.Repeat("not json ", 1000))},
			wantErr: &agentstate.LimitError{Field: "input_json.messages", Limit: 1, Got: 2, AtLeast: true},
		},
		{
			// 1,000 bytes of limit, 900 taken by the rest of the request: the
			// prompt may expand to 100 + len(prompt) bytes at most.
			name:    "a template expanding past the message limit",
			limits:  Limits{MaxMessages: 10, MaxPartsPerMessage: 10, MaxTools: 10, MaxMessageBytes: 1000},
			req:     CompileRequest{TemplateVariables: map[string]string{"role": strings.Repeat("x", 200)}, RequestBytes: 900 + len("You are {{role}}.")},
			wantErr: &agentstate.LimitError{Field: "options.template_variables (the expanded system prompt, in bytes)", Limit: 100, Got: len("You are .") + 200},
		},
		{
			name:      "a template variable missing",
			req:       CompileRequest{TemplateVariables: map[string]string{"other": "x"}},
			wantField: `options.template_variables["role"]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := compilertest.NewCatalog()
			s, _ := newService(t, cat, tt.limits)
			tt.req.Source = StateSource{State: state()}
			_, err := s.Compile(t.Context(), tt.req)
			if tt.wantErr != nil || tt.wantField != "" {
				checkErr(t, err, tt.wantErr, tt.wantField)
				if n := len(cat.Requests()); n != 0 {
					t.Errorf("the pipeline ran %d times after a bad input", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := cat.Requests()[0].State
			got := ran{SystemPrompt: st.Context.SystemPrompt}
			for _, tool := range st.Context.Tools {
				got.Tools = append(got.Tools, tool.Name)
			}
			for _, m := range st.Context.Messages {
				got.Messages = append(got.Messages, m.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the pipeline ran on (-want +got):\n%s", diff)
			}
		})
	}
}

// checkErr checks err against want exactly, or that it is an
// InvalidArgumentError naming field.
func checkErr(t *testing.T, err, want error, field string) {
	t.Helper()
	if want != nil {
		if diff := cmp.Diff(want, err, cmpopts.EquateErrors()); diff != "" {
			var limit *agentstate.LimitError
			if errors.As(err, &limit) && errors.As(want, new(*agentstate.LimitError)) {
				diff = cmp.Diff(want, limit)
			}
			if diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
		}
		return
	}
	var invalid *agentstate.InvalidArgumentError
	if !errors.As(err, &invalid) || len(invalid.Violations) == 0 || invalid.Violations[0].Field != field {
		t.Fatalf("err = %v, want an InvalidArgumentError on %s", err, field)
	}
}

// TestOmitStablePrefix: the leading messages the caller holds byte for byte
// are left out when asked, and nothing else ever is.
func TestOmitStablePrefix(t *testing.T) {
	foreign := foreignState()
	tests := []struct {
		name        string
		req         CompileRequest
		wantOmitted int
		wantField   string
	}{
		{"not asked", CompileRequest{}, 0, ""},
		// The fake catalog reports message 1 (the first log message) as the first changed.
		{"the caller's prompt and log", CompileRequest{OmitStablePrefix: true}, 1, ""},
		{"a templated prompt is not what the caller holds", CompileRequest{OmitStablePrefix: true, TemplateVariables: map[string]string{"role": "a guide"}}, 0, ""},
		{"a discarded history is not what the caller holds",
			CompileRequest{Request: Request{Source: StateSource{State: foreign, Reset: true}}, OmitStablePrefix: true}, 0, ""},
		{"a blob is not held", CompileRequest{Request: Request{Source: StateSource{State: state(), FromBlob: true}}, OmitStablePrefix: true}, 0, "omit_stable_prefix"},
		{"an imported log is not held", CompileRequest{Input: &ProviderInput{Format: agentstate.RenderOpenAI, Body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`)},
			OmitStablePrefix: true}, 0, "omit_stable_prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newService(t, compilertest.NewCatalog(), Limits{})
			if tt.req.Source.State == nil {
				tt.req.Source.State = state()
			}
			res, err := s.Compile(t.Context(), tt.req)
			if tt.wantField != "" {
				checkErr(t, err, nil, tt.wantField)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			all := 1 + len(tt.req.Source.State.Context.Messages)
			if res.HistoryDiscarded {
				all = 1
			}
			got := []int{res.OmittedMessages, len(res.Messages)}
			if diff := cmp.Diff([]int{tt.wantOmitted, all - tt.wantOmitted}, got); diff != "" {
				t.Errorf("[omitted, returned] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoad: the lifecycle checks run before every use case, with reset and
// the call's model.
func TestLoad(t *testing.T) {
	foreign := foreignState()
	tests := []struct {
		name          string
		src           StateSource
		wantModel     agentstate.ModelSpec
		wantDiscarded bool
		wantReason    string
	}{
		{"as it is", StateSource{State: state()}, agentstate.ModelSpec{Name: "gpt-4o", Provider: "openai"}, false, ""},
		{"the call's model keeps the state's provider", StateSource{State: state(), Model: agentstate.ModelSpec{Name: "gpt-4.1"}},
			agentstate.ModelSpec{Name: "gpt-4.1", Provider: "openai"}, false, ""},
		{"another provider", StateSource{State: state(), Model: agentstate.ModelSpec{Name: "claude", Provider: "anthropic"}},
			agentstate.ModelSpec{}, false, agentstate.ReasonProviderMismatch},
		{"another provider with reset", StateSource{State: state(), Model: agentstate.ModelSpec{Name: "gpt-4o", Provider: "azure"}, Reset: true},
			agentstate.ModelSpec{Name: "gpt-4o", Provider: "azure"}, true, ""},
		{"a call's model of another provider, named or not", StateSource{State: state(), Model: agentstate.ModelSpec{Name: "claude-sonnet-4-5"}},
			agentstate.ModelSpec{}, false, agentstate.ReasonProviderMismatch},
		{"a state without provider is locked to its model's", StateSource{State: unlocked()},
			agentstate.ModelSpec{Name: "gpt-4o", Provider: "openai"}, false, ""},
		{"another version", StateSource{State: foreign}, agentstate.ModelSpec{}, false, agentstate.ReasonStateVersionUnsupported},
		{"another version with reset", StateSource{State: foreign, Reset: true}, agentstate.ModelSpec{Name: "gpt-4o", Provider: "openai"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := compilertest.NewCatalog()
			s, _ := newService(t, cat, Limits{})
			res, err := s.Budget(t.Context(), Request{Source: tt.src})
			if tt.wantReason != "" {
				var pre *agentstate.PreconditionError
				if !errors.As(err, &pre) || pre.Reason != tt.wantReason {
					t.Fatalf("err = %v, want a precondition %s", err, tt.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := cat.Requests()[0].State
			type loadedState struct {
				Model    agentstate.ModelSpec
				Version  uint32
				Messages int
				Prompt   string
			}
			want := loadedState{tt.wantModel, agentstate.CurrentSchemaVersion, 2, "You are {{role}}."}
			if tt.wantDiscarded {
				want.Messages = 0
			}
			if diff := cmp.Diff(want, loadedState{st.Model, st.SchemaVersion, len(st.Context.Messages), st.Context.SystemPrompt}); diff != "" {
				t.Errorf("loaded (-want +got):\n%s", diff)
			}
			if res.Budget == nil || res.Report == nil {
				t.Errorf("Budget returned %+v", res)
			}
		})
	}
}

func TestDiscardsHistory(t *testing.T) {
	for _, tt := range []struct {
		version uint32
		reset   bool
		want    bool
	}{
		{0, true, false}, {agentstate.CurrentSchemaVersion, true, false}, {agentstate.CurrentSchemaVersion + 1, true, true}, {agentstate.CurrentSchemaVersion + 1, false, false},
	} {
		if got := DiscardsHistory(tt.version, tt.reset); got != tt.want {
			t.Errorf("DiscardsHistory(%d, %v) = %v, want %v", tt.version, tt.reset, got, tt.want)
		}
	}
}

// TestRouteCompactsAtExecutionEnd: a step that ends the execution is followed
// by the profile's compaction when it asks for one; a compaction that fails
// leaves the appended state as it is and says why.
func TestRouteCompactsAtExecutionEnd(t *testing.T) {
	running := state()
	running.Execution = agentstate.Execution{ID: "e1", Status: agentstate.ExecutionRunning}
	stop := Step{Messages: []agentstate.Message{text("", agentstate.RoleAssistant, "done")}, FinishReason: routing.FinishStop}
	tests := []struct {
		name           string
		compact        bool
		compactErr     error
		input          RouteInput
		wantLast       string
		wantCompaction *policies.Report
		wantLog        string
	}{
		{"no compaction asked", false, nil, stop, "e1-s0-0", nil, ""},
		{"the execution goes on", true, nil, Step{Messages: []agentstate.Message{text("", agentstate.RoleAssistant, "more")}, FinishReason: routing.FinishLength}, "e1-s0-0", nil, ""},
		{"compacted", true, nil, stop, compilertest.SummaryID, &policies.Report{Profile: "pragmatic", FirstChangedIndex: 1, VerbatimPrefix: 1}, ""},
		{"compaction does not fit", true, &agentstate.IrreducibleError{NeededTokens: 9, AvailableTokens: 5}, stop, "e1-s0-0",
			&policies.Report{Profile: "pragmatic", Warnings: []string{"compaction at the end of the execution did not fit the window: " +
				(&agentstate.IrreducibleError{NeededTokens: 9, AvailableTokens: 5}).Error()}}, ""},
		{"compaction fails", true, errors.New("summary cache down"), stop, "e1-s0-0",
			&policies.Report{Profile: "pragmatic", Warnings: []string{"compaction at the end of the execution failed; the state is returned uncompacted"}}, "summary cache down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := compilertest.NewCatalog()
			cat.CompactOnExecutionEnd, cat.CompactErr = tt.compact, tt.compactErr
			s, logs := newService(t, cat, Limits{})
			res, err := s.Route(t.Context(), RouteRequest{Source: StateSource{State: running}, Input: tt.input})
			if err != nil {
				t.Fatal(err)
			}
			log := res.State.Context.Messages
			if got := log[len(log)-1].ID; got != tt.wantLast {
				t.Errorf("last message %q, want %q", got, tt.wantLast)
			}
			if diff := cmp.Diff(tt.wantCompaction, res.Compaction, cmpopts.IgnoreFields(policies.Report{}, "Messages", "Stages")); diff != "" {
				t.Errorf("compaction report (-want +got):\n%s", diff)
			}
			if !strings.Contains(logs.String(), tt.wantLog) || (tt.wantLog == "") != (logs.Len() == 0) {
				t.Errorf("logs %q, want them to hold %q", logs.String(), tt.wantLog)
			}
		})
	}
}

func TestRouteRefusesUnknownProfilesBeforeAppending(t *testing.T) {
	cat := compilertest.NewCatalog()
	s, _ := newService(t, cat, Limits{})
	_, err := s.Route(t.Context(), RouteRequest{Source: StateSource{State: state()}, Profile: "nope", Input: Event{Text: "x"}})
	var unknown *agentstate.UnknownProfileError
	if !errors.As(err, &unknown) || unknown.Name != "nope" {
		t.Fatalf("err = %v, want UnknownProfileError", err)
	}
}

func TestCountTokens(t *testing.T) {
	msgs := []agentstate.Message{text("m1", agentstate.RoleUser, "12345678")}
	tests := []struct {
		name    string
		req     CountRequest
		want    *CountResult
		wantErr error
	}{
		{"by model", CountRequest{Model: "gpt-4o", Texts: []string{"1234", ""}, Messages: msgs}, &CountResult{
			Counter: "o200k_base", Total: 1 + 0 + 5, Provenance: agentstate.ProvenanceExact,
			Texts:    []TokenCount{{1, agentstate.ProvenanceExact}, {0, agentstate.ProvenanceExact}},
			Messages: []TokenCount{{5, agentstate.ProvenanceExact}},
		}, nil},
		{"by encoding", CountRequest{Encoding: "cl100k_base", Texts: []string{"12345678"}}, &CountResult{
			Counter: "cl100k_base", Total: 2, Provenance: agentstate.ProvenanceExact, Texts: []TokenCount{{2, agentstate.ProvenanceExact}},
		}, nil},
		{"nothing to count", CountRequest{Model: "gpt-4o"}, &CountResult{Counter: "o200k_base"}, nil},
		{"unknown model is the request's field", CountRequest{Model: "gpt-9"}, nil, &agentstate.UnknownModelError{Field: "model", Model: "gpt-9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newService(t, compilertest.NewCatalog(), Limits{})
			got, err := s.CountTokens(t.Context(), tt.req)
			if diff := cmp.Diff(tt.wantErr, err); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderIntoInput: with render_into_input the rendering is the body the
// conversation came in, here unchanged (the fake catalog keeps every
// message), so empty: the body goes as it is; the pipeline renders nothing
// itself, and the messages are left out of the result. Without a body, with a rendering in
// another format or with template variables it is bad input.
func TestRenderIntoInput(t *testing.T) {
	body := `{"model": "gpt-4o",  "messages":[{"role":"user","content":"hi"}], "x_unknown": [1]}`
	input := &ProviderInput{Format: agentstate.RenderOpenAI, Body: []byte(body)}
	cat := compilertest.NewCatalog()
	s, _ := newService(t, cat, Limits{})
	res, err := s.Compile(t.Context(), CompileRequest{Request: Request{Source: StateSource{State: state()}}, Input: input, RenderIntoInput: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rendered != "" || res.Messages != nil {
		t.Errorf("rendered %q with %d messages, want none of either: the body goes as it is", res.Rendered, len(res.Messages))
	}
	if r := cat.Requests()[0].Options.Render; r != agentstate.RenderNone {
		t.Errorf("the pipeline was asked to render %v", r)
	}
	// The body gives the model a state without one lacks: its name, its
	// answer limit as the reservation and Ollama's window.
	ollama := &ProviderInput{Format: agentstate.RenderOllama, Body: []byte(`{"model":"qwen3:8b","options":{"num_ctx":16384,"num_predict":512},"messages":[{"role":"user","content":"hi"}]}`)}
	unnamed := state()
	unnamed.Model = agentstate.ModelSpec{Provider: "ollama"}
	if _, err := s.Compile(t.Context(), CompileRequest{Request: Request{Source: StateSource{State: unnamed}}, Input: ollama, RenderIntoInput: true}); err != nil {
		t.Fatal(err)
	}
	window, reserved := uint32(16384), uint32(512)
	if diff := cmp.Diff(agentstate.ModelSpec{Name: "qwen3:8b", Provider: "ollama", ContextWindowTokens: &window, MaxOutputTokens: &reserved}, cat.Requests()[1].State.Model); diff != "" {
		t.Errorf("the model (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name  string
		req   CompileRequest
		field string
	}{
		{"no model anywhere", CompileRequest{Request: Request{Source: StateSource{State: unnamed}}, RenderIntoInput: true,
			Input: &ProviderInput{Format: agentstate.RenderOpenAI, Body: []byte(`{"messages":[{"role":"user","content":"hi"}]}`)}}, "input_json.model"},
		{"no body", CompileRequest{RenderIntoInput: true}, "options.render_into_input"},
		{"another format", CompileRequest{Request: Request{Options: agentstate.Options{Render: agentstate.RenderAnthropic}}, Input: input, RenderIntoInput: true}, "options.render"},
		{"template variables", CompileRequest{Input: input, RenderIntoInput: true, TemplateVariables: map[string]string{"role": "x"}}, "options.template_variables"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.req.Source.State == nil {
				tt.req.Source = StateSource{State: state()}
			}
			_, err := s.Compile(t.Context(), tt.req)
			checkErr(t, err, nil, tt.field)
		})
	}
}

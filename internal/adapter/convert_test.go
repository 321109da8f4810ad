package adapter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/adapter/adaptertest"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func u32p(v uint32) *uint32 { return &v }

// everyFieldStates set, between them, every field of AgentState and of every
// message type it reaches, every oneof case and every enum value, so the round
// trip covers them all (TestEveryFieldStatesCoverTheSchema keeps it honest).
func everyFieldStates() []*ctxcv1.AgentState {
	out := []*ctxcv1.AgentState{everyFieldState()}
	for _, st := range []ctxcv1.ExecutionStatus{ctxcv1.ExecutionStatus_EXECUTION_STATUS_COMPLETED, ctxcv1.ExecutionStatus_EXECUTION_STATUS_FAILED} {
		s := everyFieldState()
		s.Execution.Status = st
		out = append(out, s)
	}
	return out
}

// everyFieldState is the richest single state of everyFieldStates.
func everyFieldState() *ctxcv1.AgentState {
	text := func(s string) *ctxcv1.Part { return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}} }
	return &ctxcv1.AgentState{
		SchemaVersion: 1,
		AgentId:       "agent-7",
		Model: &ctxcv1.ModelSpec{
			Name: "gpt-4o", Provider: "openai",
			ContextWindowTokenCount: u32p(0), // present and zero is not the same as absent
			MaxOutputTokenCount:     u32p(4096),
		},
		Execution: &ctxcv1.Execution{Id: "exec-2", StepIndex: 3, Status: ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING},
		Context: &ctxcv1.AgentContext{
			SystemPrompt:   "You are a careful agent.",
			ResponseFormat: `{"type":"json_object"}`,
			Metadata:       map[string]string{"tenant": "acme", "": "empty key"},
			Tools: []*ctxcv1.ToolDefinition{
				{Name: "read_file", Description: "Reads a file.", ParametersJson: `{"type":"object"}`},
				{Name: "bare"},
			},
			Messages: []*ctxcv1.Message{
				{Id: "m1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("Fix the bug."), text("")},
					CreateTime: &timestamppb.Timestamp{Seconds: 1_700_000_000, Nanos: 123456789}, Pinned: true, Importance: 100,
					Metadata: map[string]string{"source": "web"}},
				{Id: "m2", Role: ctxcv1.Role_ROLE_SYSTEM, Kind: ctxcv1.MessageKind_MESSAGE_KIND_EVENT, Parts: []*ctxcv1.Part{text("User moved.")}},
				{Id: "m3", Role: ctxcv1.Role_ROLE_ASSISTANT, ExecutionId: "exec-2",
					Usage: &ctxcv1.Usage{InputTokenCount: 1200, CachedInputTokenCount: 800, OutputTokenCount: 55},
					Parts: []*ctxcv1.Part{
						{Content: &ctxcv1.Part_Reasoning{Reasoning: &ctxcv1.Reasoning{Text: "thinking", Signature: []byte{0, 0xff, 0x80, 'x'}}}},
						{Content: &ctxcv1.Part_Reasoning{Reasoning: &ctxcv1.Reasoning{}}},
						{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: "c1", Name: "read_file", ArgumentsJson: `{"path":"a.go"}`}}},
						{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: "c2", Name: "bare"}}},
					}},
				{Id: "m4", Role: ctxcv1.Role_ROLE_TOOL, ExecutionId: "exec-2",
					Mask: &ctxcv1.Mask{Reason: "observation_masking", Placeholder: "[output masked]", OriginalTokenCount: 30000},
					Parts: []*ctxcv1.Part{
						{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: "c1", Name: "read_file", Content: "package a", IsError: false}}},
						{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: "c2", Content: "boom", IsError: true}}},
					}},
				{Id: "m5", Role: ctxcv1.Role_ROLE_USER, Kind: ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY, CoversMessageIds: []string{"m1", "m2"},
					Mask: &ctxcv1.Mask{}, Usage: &ctxcv1.Usage{},
					Parts: []*ctxcv1.Part{
						{Content: &ctxcv1.Part_Image{Image: &ctxcv1.Image{Source: &ctxcv1.Image_Url{Url: "https://example.com/a.png"}}}},
						{Content: &ctxcv1.Part_Image{Image: &ctxcv1.Image{Source: &ctxcv1.Image_Data{Data: []byte{0x89, 'P', 'N', 'G'}}, MediaType: "image/png"}}},
						{Content: &ctxcv1.Part_Image{Image: &ctxcv1.Image{Source: &ctxcv1.Image_Url{}}}},
					}},
				{Id: "m6", Role: ctxcv1.Role_ROLE_TOOL, Kind: ctxcv1.MessageKind_MESSAGE_KIND_REPAIR, Parts: []*ctxcv1.Part{
					{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: "gone"}}}, // its call is not in the log: accepted
				}},
				{Id: "m7", Role: ctxcv1.Role_ROLE_ASSISTANT, Kind: ctxcv1.MessageKind_MESSAGE_KIND_PLACEHOLDER, Parts: []*ctxcv1.Part{text("[dropped]")},
					CreateTime: &timestamppb.Timestamp{Seconds: -62135596800}},
			},
		},
	}
}

func TestEveryFieldStatesCoverTheSchema(t *testing.T) {
	seen := map[protoreflect.FullName]bool{}
	enums := map[protoreflect.FullName]map[protoreflect.EnumNumber]bool{}
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			seen[fd.FullName()] = true
			note := func(v protoreflect.Value) {
				switch fd.Kind() {
				case protoreflect.MessageKind:
					walk(v.Message())
				case protoreflect.EnumKind:
					if enums[fd.Enum().FullName()] == nil {
						enums[fd.Enum().FullName()] = map[protoreflect.EnumNumber]bool{}
					}
					enums[fd.Enum().FullName()][v.Enum()] = true
				}
			}
			switch {
			case fd.IsList():
				for i := 0; i < v.List().Len(); i++ {
					note(v.List().Get(i))
				}
			case fd.IsMap():
			default:
				note(v)
			}
			return true
		})
	}
	for _, s := range everyFieldStates() {
		walk(s.ProtoReflect())
	}

	var missing []string
	var check func(md protoreflect.MessageDescriptor, visited map[protoreflect.FullName]bool)
	check = func(md protoreflect.MessageDescriptor, visited map[protoreflect.FullName]bool) {
		if visited[md.FullName()] || md.FullName() == "google.protobuf.Timestamp" {
			return
		}
		visited[md.FullName()] = true
		for i := 0; i < md.Fields().Len(); i++ {
			fd := md.Fields().Get(i)
			if !seen[fd.FullName()] {
				missing = append(missing, string(fd.FullName()))
			}
			if fd.Kind() == protoreflect.EnumKind {
				vals := fd.Enum().Values()
				for j := 0; j < vals.Len(); j++ {
					// UNSPECIFIED is the unset default: Range never reports it.
					if n := vals.Get(j).Number(); n != 0 && !enums[fd.Enum().FullName()][n] {
						missing = append(missing, string(vals.Get(j).FullName()))
					}
				}
			}
			if fd.Message() != nil && !fd.IsMap() {
				check(fd.Message(), visited)
			}
		}
	}
	check((&ctxcv1.AgentState{}).ProtoReflect().Descriptor(), map[protoreflect.FullName]bool{})
	if len(missing) > 0 {
		t.Errorf("everyFieldStates do not set these fields or enum values; add them so the round trip covers them:\n%s", strings.Join(missing, "\n"))
	}
}

// canonical is the form the round trip promises to preserve: fields this
// build does not know (unknown fields) are dropped, and an empty context or
// execution is the same as none.
func canonical(in *ctxcv1.AgentState) *ctxcv1.AgentState {
	out := proto.CloneOf(in)
	var clear func(m protoreflect.Message)
	clear = func(m protoreflect.Message) {
		m.SetUnknown(nil)
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					clear(v.List().Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				clear(v.Message())
			}
			return true
		})
	}
	clear(out.ProtoReflect())
	if out.Context != nil && proto.Size(out.Context) == 0 {
		out.Context = nil
	}
	if out.Execution != nil && proto.Size(out.Execution) == 0 {
		out.Execution = nil
	}
	return out
}

// decodeState decodes a state with the default limits, field violations
// included in the error.
func decodeState(in *ctxcv1.AgentState) (*agentstate.State, error) {
	d := decoder{limits: compiler.DefaultLimits()}
	st, err := d.state("state", in)
	if err == nil {
		err = d.err()
	}
	return st, err
}

func TestRoundTripEveryField(t *testing.T) {
	for i, in := range everyFieldStates() {
		st, err := decodeState(in)
		if err != nil {
			t.Fatalf("everyFieldStates()[%d] is valid, got %v", i, err)
		}
		if diff := cmp.Diff(canonical(in), StateToProto(st), protocmp.Transform()); diff != "" {
			t.Errorf("round trip of everyFieldStates()[%d] changed the state (-in +out):\n%s", i, diff)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, seed := range append(everyFieldStates(),
		&ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "m"}},
		&ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "m"}, Context: &ctxcv1.AgentContext{}, Execution: &ctxcv1.Execution{}},
	) {
		b, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &ctxcv1.AgentState{}
		if err := proto.Unmarshal(data, in); err != nil {
			return
		}
		st, err := decodeState(in)
		if err != nil {
			var invalid *agentstate.InvalidArgumentError
			var precondition *agentstate.PreconditionError
			var limit *agentstate.LimitError
			if !errors.As(err, &invalid) && !errors.As(err, &precondition) && !errors.As(err, &limit) {
				t.Fatalf("invalid input must give a typed error, got %T: %v", err, err)
			}
			return
		}
		if diff := cmp.Diff(canonical(in), StateToProto(st), protocmp.Transform()); diff != "" {
			t.Errorf("round trip changed the state (-in +out):\n%s", diff)
		}
		// A compile that changed nothing answers with the request's own
		// messages, unless they carry fields this build does not know.
		log := in.GetContext().GetMessages()
		reused := checkCompiled(t, st.Context.Messages, log)
		for i, ok := range reused {
			if !ok && proto.Equal(log[i], canonicalMessage(log[i])) {
				t.Errorf("message %d unchanged and with no unknown field, yet converted again", i)
			}
		}
	})
}

// canonicalMessage is a log message as canonical leaves it.
func canonicalMessage(m *ctxcv1.Message) *ctxcv1.Message {
	return canonical(&ctxcv1.AgentState{Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{m}}}).GetContext().GetMessages()[0]
}

func TestValidationViolations(t *testing.T) {
	msgs := func(s *ctxcv1.AgentState) []*ctxcv1.Message { return s.Context.Messages }
	tests := []struct {
		name   string
		change func(s *ctxcv1.AgentState)
		want   []agentstate.FieldViolation
	}{
		{"valid", func(*ctxcv1.AgentState) {}, nil},
		{"result whose call is not in the log is accepted", func(s *ctxcv1.AgentState) {
			msgs(s)[2].Parts[0].GetToolResult().ToolCallId = "elsewhere"
		}, nil},
		{"model missing", func(s *ctxcv1.AgentState) { s.Model = nil },
			[]agentstate.FieldViolation{{Field: "state.model.name", Description: "required: the model name selects the tokenizer and the window"}}},
		{"message id empty", func(s *ctxcv1.AgentState) { msgs(s)[1].Id = "" },
			[]agentstate.FieldViolation{{Field: "state.context.messages[1].id", Description: "required"}}},
		{"duplicate message id", func(s *ctxcv1.AgentState) { msgs(s)[2].Id = "u1" },
			[]agentstate.FieldViolation{{Field: "state.context.messages[2].id", Description: `duplicate id "u1" (also state.context.messages[0].id)`}}},
		{"role unspecified", func(s *ctxcv1.AgentState) { msgs(s)[0].Role = 0 },
			[]agentstate.FieldViolation{{Field: "state.context.messages[0].role", Description: "required"}}},
		{"role unknown number", func(s *ctxcv1.AgentState) { msgs(s)[0].Role = 9 },
			[]agentstate.FieldViolation{{Field: "state.context.messages[0].role", Description: "unknown role 9"}}},
		{"kind unknown number", func(s *ctxcv1.AgentState) { msgs(s)[0].Kind = 42 },
			[]agentstate.FieldViolation{{Field: "state.context.messages[0].kind", Description: "unknown message kind 42"}}},
		{"message without parts", func(s *ctxcv1.AgentState) { msgs(s)[0].Parts = nil },
			[]agentstate.FieldViolation{{Field: "state.context.messages[0].parts", Description: "at least one part is required"}}},
		{"part with no content", func(s *ctxcv1.AgentState) { msgs(s)[0].Parts = append(msgs(s)[0].Parts, &ctxcv1.Part{}) },
			[]agentstate.FieldViolation{{Field: "state.context.messages[0].parts[1]", Description: "no content: set one of text, tool_call, tool_result, image, reasoning"}}},
		{"tool call without id and name", func(s *ctxcv1.AgentState) {
			msgs(s)[1].Parts[0].GetToolCall().Id, msgs(s)[1].Parts[0].GetToolCall().Name = "", ""
		},
			[]agentstate.FieldViolation{
				{Field: "state.context.messages[1].parts[0].tool_call.id", Description: "required"},
				{Field: "state.context.messages[1].parts[0].tool_call.name", Description: "required"},
			}},
		{"tool result without tool_call_id", func(s *ctxcv1.AgentState) { msgs(s)[2].Parts[0].GetToolResult().ToolCallId = "" },
			[]agentstate.FieldViolation{{Field: "state.context.messages[2].parts[0].tool_result.tool_call_id", Description: "required: the id of the tool call this result answers"}}},
		{"tool message with a text part", func(s *ctxcv1.AgentState) {
			msgs(s)[2].Parts = append(msgs(s)[2].Parts, &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: "x"}})
		}, []agentstate.FieldViolation{{Field: "state.context.messages[2].parts[1]", Description: "a ROLE_TOOL message holds only tool_result parts, not text"}}},
		{"image without source", func(s *ctxcv1.AgentState) {
			msgs(s)[0].Parts = append(msgs(s)[0].Parts, &ctxcv1.Part{Content: &ctxcv1.Part_Image{Image: &ctxcv1.Image{MediaType: "image/png"}}})
		}, []agentstate.FieldViolation{{Field: "state.context.messages[0].parts[1].image", Description: "no source: set url or data"}}},
		{"image data without media type", func(s *ctxcv1.AgentState) {
			msgs(s)[0].Parts = append(msgs(s)[0].Parts, &ctxcv1.Part{Content: &ctxcv1.Part_Image{Image: &ctxcv1.Image{Source: &ctxcv1.Image_Data{Data: []byte{1}}}}})
		}, []agentstate.FieldViolation{{Field: "state.context.messages[0].parts[1].image.media_type", Description: "required with data"}}},
		{"invalid create time", func(s *ctxcv1.AgentState) { msgs(s)[0].CreateTime = &timestamppb.Timestamp{Nanos: -1} },
			[]agentstate.FieldViolation{{Field: "state.context.messages[0].create_time", Description: "invalid timestamp: seconds must be within years 1-9999 and nanos within [0, 1e9)"}}},
		{"importance over 100", func(s *ctxcv1.AgentState) { msgs(s)[0].Importance = 101 },
			[]agentstate.FieldViolation{{Field: "state.context.messages[0].importance", Description: "must be between 0 and 100"}}},
		{"tool definition without name", func(s *ctxcv1.AgentState) { s.Context.Tools = []*ctxcv1.ToolDefinition{{Description: "x"}} },
			[]agentstate.FieldViolation{{Field: "state.context.tools[0].name", Description: "required"}}},
		{"unknown execution status", func(s *ctxcv1.AgentState) { s.Execution = &ctxcv1.Execution{Status: 7} },
			[]agentstate.FieldViolation{{Field: "state.execution.status", Description: "unknown execution status 7"}}},
		{"every problem at once", func(s *ctxcv1.AgentState) {
			s.Model.Name = ""
			msgs(s)[0].Role = 9
			msgs(s)[1].Parts[0] = &ctxcv1.Part{}
			msgs(s)[2].Id = ""
		}, []agentstate.FieldViolation{
			{Field: "state.model.name", Description: "required: the model name selects the tokenizer and the window"},
			{Field: "state.context.messages[0].role", Description: "unknown role 9"},
			{Field: "state.context.messages[1].parts[0]", Description: "no content: set one of text, tool_call, tool_result, image, reasoning"},
			{Field: "state.context.messages[2].id", Description: "required"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := adaptertest.ValidState()
			tt.change(s)
			d := decoder{limits: compiler.DefaultLimits()}
			if _, err := d.state("state", s); err != nil {
				t.Fatalf("unexpected non-field error %v", err)
			}
			if diff := cmp.Diff(tt.want, d.violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidationStopsOnLimits(t *testing.T) {
	small := compiler.Limits{MaxMessages: 2, MaxPartsPerMessage: 1, MaxTools: 1}
	tests := []struct {
		name   string
		limits compiler.Limits
		state  *ctxcv1.AgentState
		blob   []byte
		want   error
	}{
		{"missing state", small, nil, nil, nil},
		{"too many messages", compiler.Limits{MaxMessages: 2, MaxPartsPerMessage: 5, MaxTools: 5}, adaptertest.ValidState(), nil,
			&agentstate.LimitError{Field: "state.context.messages", Limit: 2, Got: 3}},
		{"too many parts", compiler.Limits{MaxMessages: 5, MaxPartsPerMessage: 1, MaxTools: 5}, func() *ctxcv1.AgentState {
			s := adaptertest.ValidState()
			s.Context.Messages[1].Parts = append(s.Context.Messages[1].Parts, s.Context.Messages[1].Parts[0])
			return s
		}(), nil, &agentstate.LimitError{Field: "state.context.messages[1].parts", Limit: 1, Got: 2}},
		{"too many tools", compiler.Limits{MaxMessages: 5, MaxPartsPerMessage: 5, MaxTools: 1}, func() *ctxcv1.AgentState {
			s := adaptertest.ValidState()
			s.Context.Tools = []*ctxcv1.ToolDefinition{{Name: "a"}, {Name: "b"}}
			return s
		}(), nil, &agentstate.LimitError{Field: "state.context.tools", Limit: 1, Got: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decoder{limits: tt.limits}
			_, err := d.state("state", tt.state)
			if diff := cmp.Diff(tt.want, err); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if tt.state == nil {
				want := []agentstate.FieldViolation{{Field: "state", Description: "required"}}
				if diff := cmp.Diff(want, d.violations); diff != "" {
					t.Errorf("violations (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestOptionsValidation(t *testing.T) {
	ratio := func(r float64) *float64 { return &r }
	tests := []struct {
		in   *ctxcv1.CompileOptions
		want []agentstate.FieldViolation
	}{
		{nil, nil},
		{&ctxcv1.CompileOptions{View: ctxcv1.View_VIEW_CONVERSATION, SoftThresholdRatio: ratio(1)}, nil},
		{&ctxcv1.CompileOptions{SoftThresholdRatio: ratio(0)}, []agentstate.FieldViolation{{Field: "options.soft_threshold_ratio", Description: "must be in (0, 1]"}}},
		{&ctxcv1.CompileOptions{SoftThresholdRatio: ratio(1.5), View: 5}, []agentstate.FieldViolation{
			{Field: "options.view", Description: "unknown view 5"},
			{Field: "options.soft_threshold_ratio", Description: "must be in (0, 1]"},
		}},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			d := decoder{limits: compiler.DefaultLimits()}
			d.options("options", tt.in)
			if diff := cmp.Diff(tt.want, d.violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGoalValidation(t *testing.T) {
	long := strings.Repeat("g", compiler.MaxGoalBytes)
	tests := []struct {
		name string
		in   *ctxcv1.ContextGoal
		want []agentstate.FieldViolation
	}{
		{"none", nil, nil},
		{"a description", &ctxcv1.ContextGoal{Description: "find why the export fails", SuccessCriteria: []string{"the failing step named"}}, nil},
		{"at the limit", &ctxcv1.ContextGoal{Description: long}, nil},
		{"criteria without a description", &ctxcv1.ContextGoal{Description: " ", SuccessCriteria: []string{"done"}},
			[]agentstate.FieldViolation{{Field: "goal.description", Description: "required when goal is set: what the agent is trying to achieve"}}},
		{"over the limit with its criteria", &ctxcv1.ContextGoal{Description: long, SuccessCriteria: []string{"x"}},
			[]agentstate.FieldViolation{{Field: "goal", Description: fmt.Sprintf("%d bytes of description and success criteria, over the limit of %d", compiler.MaxGoalBytes+2, compiler.MaxGoalBytes)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decoder{limits: compiler.DefaultLimits()}
			d.goal("goal", tt.in)
			if diff := cmp.Diff(tt.want, d.violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateblob"
)

// TestSeedPromises drives the real binary through what the seed designs
// promise and ctxc once did differently or dropped without a word (issue 15,
// items 1, 2, 4, 5, 8 and 10): every answer places what the request carried
// or says why not.
func TestSeedPromises(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--config", "examples/profiles.yaml")
	client := s.client()
	ctx := context.Background()

	t.Run("attachments are placed under every profile", func(t *testing.T) {
		list, err := client.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range list.GetProfiles() {
			got[p.GetName()] = p.GetAttachmentPolicy()
		}
		want := map[string]string{}
		for name := range got {
			want[name] = "place_attachments"
		}
		want["llm-assisted"] = "llm_plan" // its own plan stage, deterministic without a planner
		if diff := cmp.Diff(want, got); diff != "" || len(got) < 4 {
			t.Errorf("attachment policies (-want +got):\n%s", diff)
		}
		for name := range got {
			req := readExample(t, "chat.json")
			req.Profile = name
			req.Attachments = []*ctxcv1.Attachment{{AttachmentId: "york-guide", Title: "York guide", Content: "Clifford's Tower opens at 10:00 on Saturdays."}}
			resp, err := client.Compile(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			placed := attachmentsMessage(resp)
			if !strings.Contains(placed, "Clifford's Tower opens at 10:00") || !strings.Contains(placed, `id="york-guide"`) {
				t.Errorf("%s: the attachment is not in the context:\n%s", name, placed)
			}
			if ids := messageIDs(resp); ids[len(ids)-2] != "ctxc-attachments" || ids[len(ids)-1] != "u2" {
				t.Errorf("%s: messages %v, want the attachments right before the latest user turn u2", name, ids)
			}
			arts := resp.GetReport().GetArtifacts()
			if len(arts) != 1 || arts[0].GetArtifactId() != "york-guide" || arts[0].GetStrategy() != "include" {
				t.Errorf("%s: artifacts %v", name, arts)
			}
		}
	})

	t.Run("an attachment named by id alone is the one sent before", func(t *testing.T) {
		req := readExample(t, "chat.json")
		req.Attachments = []*ctxcv1.Attachment{{AttachmentId: "walls", Content: "The city walls close at dusk."}, {Content: "Bettys opens at 9:00."}}
		first, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		arts := first.GetReport().GetArtifacts()
		if len(arts) != 2 {
			t.Fatalf("artifacts %v, want both attachments", arts)
		}
		derived := arts[1].GetArtifactId()
		if !strings.HasPrefix(derived, "doc-") || len(derived) != len("doc-")+16 {
			t.Fatalf("an attachment without an id got id %q, want doc- and 16 hex digits of its content's hash", derived)
		}
		req.Attachments = []*ctxcv1.Attachment{{AttachmentId: "walls"}, {AttachmentId: derived, Title: "Tea"}}
		resp, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		placed := attachmentsMessage(resp)
		for _, want := range []string{"The city walls close at dusk.", "Bettys opens at 9:00.", `title="Tea"`} {
			if !strings.Contains(placed, want) {
				t.Errorf("the id-only attachments lack %q:\n%s", want, placed)
			}
		}
		req.Attachments = []*ctxcv1.Attachment{{AttachmentId: "walls"}, {AttachmentId: "never-sent"}}
		_, err = client.Compile(ctx, req)
		wantStatus(t, err, codes.InvalidArgument, "ATTACHMENT_NOT_FOUND", "attachments[1].attachment_id")
	})

	t.Run("an attachment that does not fit whole is named in a warning", func(t *testing.T) {
		req := readExample(t, "chat.json")
		req.Options = &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(9000)}
		req.Attachments = []*ctxcv1.Attachment{{AttachmentId: "atlas", Content: strings.Repeat("x", 200_000)}}
		resp, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetReport().GetWarnings(); !containsPrefix(got, `place_attachments: attachment "atlas" cut to an extract of `) {
			t.Errorf("warnings %q do not say the attachment was cut", got)
		}
		if arts := resp.GetReport().GetArtifacts(); len(arts) != 1 || arts[0].GetStrategy() != "extract" || arts[0].GetProcessedSize() >= 200_000 {
			t.Errorf("artifacts %v", arts)
		}
	})

	t.Run("a profile without a render stage renders", func(t *testing.T) {
		req := readExample(t, "coding-agent.json")
		req.Profile = "long-running-coder"
		req.Options = &ctxcv1.CompileOptions{Render: ctxcv1.RenderFormat_RENDER_FORMAT_OPENAI}
		resp, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range resp.GetReport().GetStages() {
			if st.GetStage() == "render" {
				t.Fatalf("long-running-coder has a render stage now; this test needs a profile without one")
			}
		}
		var body struct {
			Model    string           `json:"model"`
			Messages []map[string]any `json:"messages"`
		}
		if err := json.Unmarshal([]byte(resp.GetRendered()), &body); err != nil {
			t.Fatalf("rendered %q: %v", resp.GetRendered(), err)
		}
		if body.Model != req.GetState().GetModel().GetName() || len(body.Messages) != len(resp.GetMessages()) || body.Messages[0]["role"] != "system" {
			t.Errorf("rendered model %q with %d messages, want %q with the %d compiled, system first", body.Model, len(body.Messages), req.GetState().GetModel().GetName(), len(resp.GetMessages()))
		}
	})

	t.Run("the provider lock follows the model registry", func(t *testing.T) {
		routed, err := client.Route(ctx, &ctxcv1.RouteRequest{
			State: &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}},
			Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("hello")}}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		st := routed.GetState()
		if p := st.GetModel().GetProvider(); p != "openai" {
			t.Fatalf("a state of gpt-4o without a provider came back with provider %q, want it locked to openai", p)
		}
		// A Claude model without a provider is Anthropic's, whatever the state said.
		_, err = client.Compile(ctx, &ctxcv1.CompileRequest{State: st, Model: &ctxcv1.ModelSpec{Name: "claude-sonnet-4-5"}})
		wantStatus(t, err, codes.FailedPrecondition, "PROVIDER_MISMATCH")
		reset, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: st, Model: &ctxcv1.ModelSpec{Name: "claude-sonnet-4-5"}, ResetHistory: true})
		if err != nil || !reset.GetHistoryDiscarded() || reset.GetBudget().GetCounter() != "cl100k_base*1.20" {
			t.Errorf("reset to a Claude model: %v, discarded %v, counter %q (want Anthropic's cl100k_base*1.20)", err, reset.GetHistoryDiscarded(), reset.GetBudget().GetCounter())
		}
		// A state that names another provider is still counted as the model's own.
		budget, err := client.Budget(ctx, &ctxcv1.BudgetRequest{State: &ctxcv1.AgentState{
			Model:   &ctxcv1.ModelSpec{Name: "claude-sonnet-4-5", Provider: "openai"},
			Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("hello")}}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if c := budget.GetBudget().GetCounter(); c != "cl100k_base*1.20" {
			t.Errorf("claude-sonnet-4-5 in a state of provider openai counted with %q, want Anthropic's cl100k_base*1.20", c)
		}
	})

	t.Run("reset_history starts afresh from an unreadable state_blob", func(t *testing.T) {
		routed, err := client.Route(ctx, &ctxcv1.RouteRequest{
			State:         &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}},
			WantStateBlob: true,
			Input:         &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("hello")}}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		blob := routed.GetStateBlob()
		corrupt := append([]byte(nil), blob...)
		corrupt[len(corrupt)/2] ^= 0xff
		newer := append([]byte(nil), blob...)
		newer[4] = stateblob.FormatVersion + 1
		// A blob holds what a ctxc response returned: a state in it that fails
		// validation (a message without a role) was damaged on the way.
		damaged, err := stateblob.Encode(&ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"},
			Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{{Id: "u1", Parts: []*ctxcv1.Part{text("hello")}}}}})
		if err != nil {
			t.Fatal(err)
		}
		model := &ctxcv1.ModelSpec{Name: "gpt-4o"}
		for _, tt := range []struct {
			name, reason string
			blob         []byte
			code         codes.Code
			fields       []string
			discarded    string // the warning's start after the reason
		}{
			{"corrupt", "STATE_BLOB_CORRUPT", corrupt, codes.InvalidArgument, []string{"state_blob"}, "STATE_BLOB_CORRUPT"},
			{"truncated", "STATE_BLOB_TRUNCATED", blob[:len(blob)-7], codes.InvalidArgument, []string{"state_blob"}, "STATE_BLOB_TRUNCATED"},
			{"foreign", "STATE_BLOB_FOREIGN", []byte(`{"version":1,"provider":"openai","messages":[]}`), codes.InvalidArgument, []string{"state_blob"}, "STATE_BLOB_FOREIGN"},
			{"another format version", "STATE_BLOB_VERSION_UNSUPPORTED", newer, codes.FailedPrecondition, nil, "STATE_BLOB_VERSION_UNSUPPORTED"},
			{"an invalid state inside", "INVALID_STATE", damaged, codes.InvalidArgument, []string{"state.context.messages[0].role"}, "its state is invalid: state.context.messages[0].role"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := client.Compile(ctx, &ctxcv1.CompileRequest{StateBlob: tt.blob, Model: model})
				wantStatus(t, err, tt.code, tt.reason, tt.fields...)

				resp, err := client.Compile(ctx, &ctxcv1.CompileRequest{StateBlob: tt.blob, Model: model, ResetHistory: true})
				if err != nil {
					t.Fatal(err)
				}
				if !resp.GetHistoryDiscarded() || len(resp.GetMessages()) != 0 || !containsPrefix(resp.GetReport().GetWarnings(), "state_blob could not be read and was discarded (reset_history): "+tt.discarded) {
					t.Errorf("discarded %v, %d messages, warnings %q", resp.GetHistoryDiscarded(), len(resp.GetMessages()), resp.GetReport().GetWarnings())
				}
				next, err := client.Route(ctx, &ctxcv1.RouteRequest{StateBlob: tt.blob, Model: model, ResetHistory: true,
					Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "checked in"}}})
				if err != nil {
					t.Fatal(err)
				}
				if !next.GetHistoryDiscarded() || len(next.GetStateBlob()) == 0 || len(next.GetAppendedMessageIds()) != 1 {
					t.Errorf("Route: discarded %v, blob %d bytes, appended %v", next.GetHistoryDiscarded(), len(next.GetStateBlob()), next.GetAppendedMessageIds())
				}
				_, err = client.Compile(ctx, &ctxcv1.CompileRequest{StateBlob: tt.blob, ResetHistory: true})
				wantStatus(t, err, codes.InvalidArgument, "INVALID_STATE", "model")
			})
		}
	})

	t.Run("the goal chooses what an attachment keeps", func(t *testing.T) {
		var manual strings.Builder
		for i := range 600 {
			fmt.Fprintf(&manual, "Line %d of the visitor manual: opening hours and ticket prices.\n", i)
			if i == 450 {
				manual.WriteString("Wheelchair access: the Minster's step-free entrance is on Deangate.\n")
			}
		}
		extract := func(goal *ctxcv1.ContextGoal) string {
			req := readExample(t, "chat.json")
			req.Options = &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(8000)}
			req.Attachments = []*ctxcv1.Attachment{{AttachmentId: "manual", Content: manual.String()}}
			req.Goal = goal
			resp, err := client.Compile(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if arts := resp.GetReport().GetArtifacts(); len(arts) != 1 || arts[0].GetStrategy() != "extract" {
				t.Fatalf("artifacts %v, want the manual extracted", arts)
			}
			if w := resp.GetReport().GetWarnings(); containsPrefix(w, "goal not used") {
				t.Errorf("the goal chose the extract, yet warnings %q say it was not used", w)
			}
			return attachmentsMessage(resp)
		}
		const line = "the Minster's step-free entrance is on Deangate"
		if got := extract(&ctxcv1.ContextGoal{Description: "Plan a step-free wheelchair route", SuccessCriteria: []string{"every entrance named is accessible"}}); !strings.Contains(got, line) {
			t.Errorf("with the goal, the extract lacks the access line:\n%.500s", got)
		}
		if got := extract(nil); strings.Contains(got, line) {
			t.Errorf("without the goal the access line answers nothing in the question, yet was kept")
		}
		// Without an artifact the goal weighs nothing, and the report says so.
		unused, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: readExample(t, "chat.json").GetState(), Goal: &ctxcv1.ContextGoal{Description: "Plan a step-free route"}})
		if err != nil {
			t.Fatal(err)
		}
		if w := unused.GetReport().GetWarnings(); !containsPrefix(w, `goal not used: profile "pragmatic" planned no artifact`) {
			t.Errorf("a goal with nothing to weigh, warnings %q", w)
		}
		_, err = client.Compile(ctx, &ctxcv1.CompileRequest{State: readExample(t, "chat.json").GetState(), Goal: &ctxcv1.ContextGoal{}})
		wantStatus(t, err, codes.InvalidArgument, "INVALID_STATE", "goal.description")
	})

	t.Run("an unregistered model of a known provider works with no configuration", func(t *testing.T) {
		state := func(model *ctxcv1.ModelSpec) *ctxcv1.AgentState {
			return &ctxcv1.AgentState{Model: model, Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("hello")}}}}}
		}
		type budget struct {
			Window     uint32
			Counter    string
			Provenance ctxcv1.TokenCountProvenance
			Warned     bool
		}
		for _, tt := range []struct {
			model *ctxcv1.ModelSpec
			want  budget
		}{
			{&ctxcv1.ModelSpec{Name: "gpt-7-preview"}, budget{128000, "o200k_base*1.00 (openai default)", ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ESTIMATED, true}},
			{&ctxcv1.ModelSpec{Name: "claude-opus-9"}, budget{200000, "cl100k_base*1.20 (anthropic default)", ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ESTIMATED, true}},
			{&ctxcv1.ModelSpec{Name: "qwen9:14b"}, budget{8192, "cl100k_base*1.10 (ollama default)", ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ESTIMATED, true}},
			{&ctxcv1.ModelSpec{Name: "house-model", Provider: "google"}, budget{1048576, "o200k_base*1.10 (google default)", ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_ESTIMATED, true}},
			{&ctxcv1.ModelSpec{Name: "gpt-4o"}, budget{128000, "o200k_base", ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT, false}},
		} {
			t.Run(tt.model.GetName(), func(t *testing.T) {
				resp, err := client.Budget(ctx, &ctxcv1.BudgetRequest{State: state(tt.model)})
				if err != nil {
					t.Fatal(err)
				}
				b := resp.GetBudget()
				got := budget{b.GetContextWindowTokenCount(), b.GetCounter(), b.GetProvenance(),
					containsPrefix(resp.GetReport().GetWarnings(), fmt.Sprintf("model %q is not in the model registry: counted with provider ", tt.model.GetName()))}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("budget (-want +got):\n%s", diff)
				}
			})
		}
		count, err := client.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gemini-9-ultra"}, Texts: []string{"hello"}})
		if err != nil || count.GetCounter() != "o200k_base*1.10 (google default)" {
			t.Errorf("CountTokens of gemini-9-ultra: %v, counter %q", err, count.GetCounter())
		}
		_, err = client.Budget(ctx, &ctxcv1.BudgetRequest{State: state(&ctxcv1.ModelSpec{Name: "house-model"})})
		wantStatus(t, err, codes.InvalidArgument, "UNKNOWN_MODEL", "state.model.name")
	})
}

// attachmentsMessage is the text of the message holding the attachments, "" when none.
func attachmentsMessage(resp *ctxcv1.CompileResponse) string {
	for _, m := range resp.GetMessages() {
		if m.GetId() == "ctxc-attachments" {
			return m.GetParts()[0].GetText()
		}
	}
	return ""
}

func messageIDs(resp *ctxcv1.CompileResponse) []string {
	var ids []string
	for _, m := range resp.GetMessages() {
		ids = append(ids, m.GetId())
	}
	return ids
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

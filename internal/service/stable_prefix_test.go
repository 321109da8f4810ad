package service

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateblob"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/statetest"
)

// callerContext is what a caller rebuilds from its own request and a response
// that left the stable prefix out: its system prompt as a system message, its
// log cut to the omitted count, then the response's messages.
func callerContext(req *ctxcv1.CompileRequest, resp *ctxcv1.CompileResponse) []*ctxcv1.Message {
	var held []*ctxcv1.Message
	if sp := req.GetState().GetContext().GetSystemPrompt(); sp != "" {
		held = append(held, &ctxcv1.Message{Id: compiler.SystemMessageID, Role: ctxcv1.Role_ROLE_SYSTEM,
			Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: sp}}}})
	}
	held = append(held, req.GetState().GetContext().GetMessages()...)
	n := int(resp.GetOmittedMessageCount())
	if n > len(held) {
		return nil
	}
	return append(held[:n:n], resp.GetMessages()...)
}

// TestOmitStablePrefixRebuildsTheFullContext: over generated states (damaged
// ones too), every built-in profile and windows from roomy to tight, the
// caller's rebuilt context equals the full response message for message, the
// rest of the response is the same, and what was left out is exactly the
// leading messages the caller holds as they are, within the stable prefix the
// report names.
func TestOmitStablePrefixRebuildsTheFullContext(t *testing.T) {
	svc := newRealService(t)
	// Every state under -short too: the run takes seconds, and fewer states
	// leave too few accepted ones to hold the rejection bound below.
	states := 60
	omittedAll, omittedPart, rejected := 0, 0, 0
	for seed := range states {
		r := rand.New(rand.NewSource(int64(seed)*104729 + 3))
		opts := statetest.DefaultOptions()
		opts.Turns = 2 + r.Intn(6)
		opts.Damage = []float64{0, 0, 0.1}[seed%3]
		state := adapter.StateToProto(statetest.Generate(r, opts))
		state.Model = &ctxcv1.ModelSpec{Name: benchModel}
		roomy, err := svc.Budget(t.Context(), &ctxcv1.BudgetRequest{State: state})
		if status.Code(err) == codes.InvalidArgument {
			rejected++ // damage the server refuses (a message with no parts)
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: budget: %v", seed, err)
		}
		used := float64(roomy.GetBudget().GetUsedTokenCount())
		for _, ratio := range []float64{0, 0.7, 0.35} {
			options := &ctxcv1.CompileOptions{ReservedOutputTokenCount: proto.Uint32(256)}
			if ratio > 0 {
				options.MaxContextTokenCount = proto.Uint32(uint32(used*ratio) + 256)
			}
			for _, profile := range []string{"pragmatic", "budget-aware", "policy-driven", "llm-assisted"} {
				label := fmt.Sprintf("seed %d ratio %.2f profile %s", seed, ratio, profile)
				req := &ctxcv1.CompileRequest{State: state, Profile: profile, Options: options}
				full, fullErr := svc.Compile(t.Context(), req)
				omitReq := proto.CloneOf(req)
				omitReq.OmitStablePrefix = true
				part, partErr := svc.Compile(t.Context(), omitReq)
				if fullErr != nil || partErr != nil {
					if fmt.Sprint(fullErr) != fmt.Sprint(partErr) {
						t.Errorf("%s: errors differ: full %v, omitted %v", label, fullErr, partErr)
					}
					continue
				}
				if full.GetOmittedMessageCount() != 0 {
					t.Errorf("%s: omitted %d messages without being asked", label, full.GetOmittedMessageCount())
				}
				// What is left out is every leading message the caller holds
				// as it is, and never more than the stable prefix.
				all := uint32(len(state.GetContext().GetMessages()))
				if state.GetContext().GetSystemPrompt() != "" {
					all++
				}
				held := callerContext(omitReq, &ctxcv1.CompileResponse{OmittedMessageCount: all})
				own := 0
				for own < len(held) && own < len(full.GetMessages()) && proto.Equal(held[own], full.GetMessages()[own]) {
					own++
				}
				if got := part.GetOmittedMessageCount(); int(got) != own || got > full.GetReport().GetFirstChangedIndex() {
					t.Errorf("%s: omitted %d messages; the caller holds %d leading ones as they are, the stable prefix is %d", label, got, own, full.GetReport().GetFirstChangedIndex())
				}
				if diff := protoDiff(&ctxcv1.CompileResponse{Messages: full.GetMessages()}, &ctxcv1.CompileResponse{Messages: callerContext(omitReq, part)}); diff != "" {
					t.Errorf("%s: rebuilt context differs from the full one (-full +rebuilt):\n%s", label, diff)
				}
				checkOmittedReports(t, label, svc, omitReq, full, part)
				whole := int(part.GetOmittedMessageCount()) == len(full.GetMessages())
				part.Messages, part.OmittedMessageCount, full.Messages = nil, 0, nil
				if diff := protoDiff(full, part); diff != "" {
					t.Errorf("%s: the rest of the response differs (-full +omitted):\n%s", label, diff)
				}
				if whole {
					omittedAll++
				} else {
					omittedPart++
				}
			}
		}
	}
	if rejected > states/6 {
		t.Errorf("the server rejected %d of %d states: too few left to prove anything", rejected, states)
	}
	if omittedAll == 0 || omittedPart == 0 {
		t.Errorf("%d calls left the whole context out, %d part of it: the states do not exercise both", omittedAll, omittedPart)
	}
	t.Logf("%d calls left the whole context out, %d part of it; %d states rejected", omittedAll, omittedPart, rejected)
}

// protoDiff is cmp.Diff of two responses, stage durations aside, computed
// only when proto.Equal says they differ: the diff of every equal pair
// was most of this file's test time.
func protoDiff(a, b *ctxcv1.CompileResponse) string {
	for _, r := range []*ctxcv1.CompileResponse{a, b} {
		for _, s := range r.GetReport().GetStages() {
			s.DurationMicros = 0
		}
	}
	if proto.Equal(a, b) {
		return ""
	}
	return cmp.Diff(a, b, protocmp.Transform())
}

// checkOmittedReports: with omit_stable_prefix_reports too, the report
// leaves out exactly the entries of the log messages the response left out,
// each of a message kept unchanged, and the rest of the response is the same.
func checkOmittedReports(t *testing.T, label string, svc *adapter.Service, omitReq *ctxcv1.CompileRequest, full, part *ctxcv1.CompileResponse) {
	t.Helper()
	req := proto.CloneOf(omitReq)
	req.OmitStablePrefixReports = true
	got, err := svc.Compile(t.Context(), req)
	if err != nil {
		t.Fatalf("%s: with omit_stable_prefix_reports: %v", label, err)
	}
	k := int(part.GetOmittedMessageCount())
	if k > 0 && omitReq.GetState().GetContext().GetSystemPrompt() != "" {
		k--
	}
	if int(got.GetReport().GetOmittedMessageReportCount()) != k {
		t.Errorf("%s: %d reports left out; the response left out %d log messages", label, got.GetReport().GetOmittedMessageReportCount(), k)
		return
	}
	all := full.GetReport().GetMessages()
	for i, r := range all[:k] {
		if m := omitReq.GetState().GetContext().GetMessages()[i]; r.GetMessageId() != m.GetId() || r.GetDisposition() != ctxcv1.Disposition_DISPOSITION_KEPT {
			t.Errorf("%s: report %d left out is %v, not message %q kept", label, i, r, m.GetId())
		}
	}
	want := proto.CloneOf(part)
	want.Report.Messages = all[k:]
	want.Report.OmittedMessageReportCount = uint32(k)
	if diff := protoDiff(want, got); diff != "" {
		t.Errorf("%s: with omit_stable_prefix_reports, the response differs from the one without, less the reports left out (-want +got):\n%s", label, diff)
	}
}

func TestOmitStablePrefixLeavesOutNothingTheCallerDoesNotHold(t *testing.T) {
	svc := newRealService(t)
	state := codingAgentState(40, 0, "")
	state.Context.SystemPrompt = "You are {{name}}."
	templated := &ctxcv1.CompileRequest{State: state, OmitStablePrefix: true,
		Options: &ctxcv1.CompileOptions{TemplateVariables: map[string]string{"name": "a coding agent"}}}
	resp, err := svc.Compile(t.Context(), templated)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetOmittedMessageCount() != 0 || len(resp.GetMessages()) != 41 || resp.GetMessages()[0].GetParts()[0].GetText() != "You are a coding agent." {
		t.Errorf("templated prompt: omitted %d of %d messages, first %v; want the whole context with the expanded prompt",
			resp.GetOmittedMessageCount(), len(resp.GetMessages()), resp.GetMessages()[0])
	}

	state.Context.SystemPrompt = "You are a coding agent."
	resp, err = svc.Compile(t.Context(), &ctxcv1.CompileRequest{State: state, OmitStablePrefix: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetOmittedMessageCount() != 41 || len(resp.GetMessages()) != 0 {
		t.Errorf("unchanged log: omitted %d, returned %d messages; want all 41 left out", resp.GetOmittedMessageCount(), len(resp.GetMessages()))
	}
}

func TestOmitStablePrefixNeedsTheCallersState(t *testing.T) {
	h := start(t, TransportConfig{})
	blob, err := stateblob.Encode(requestState())
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.client.Compile(t.Context(), &ctxcv1.CompileRequest{StateBlob: blob, OmitStablePrefix: true})
	wantStatus(t, err, codes.InvalidArgument, "INVALID_STATE", "omit_stable_prefix")
	_, err = h.client.Compile(t.Context(), &ctxcv1.CompileRequest{State: requestState(), OmitStablePrefix: true,
		InputFormat: ctxcv1.InputFormat_INPUT_FORMAT_OPENAI, InputJson: `{"messages":[{"role":"user","content":"hi"}]}`})
	wantStatus(t, err, codes.InvalidArgument, "INVALID_STATE", "omit_stable_prefix")
	_, err = h.client.Compile(t.Context(), &ctxcv1.CompileRequest{State: requestState(), OmitStablePrefixReports: true})
	wantStatus(t, err, codes.InvalidArgument, "INVALID_STATE", "omit_stable_prefix_reports")
}

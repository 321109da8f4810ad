package service

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/providers/wire"
)

// openAIBody is a Chat Completions body of texts, one user message each.
func openAIBody(t *testing.T, texts ...string) string {
	t.Helper()
	body := wire.OpenAIRequest{Model: "gpt-4o"}
	for _, s := range texts {
		content, _ := json.Marshal(s)
		m, err := json.Marshal(wire.OpenAIMessage{Role: "user", Content: content})
		if err != nil {
			t.Fatal(err)
		}
		body.Messages = append(body.Messages, m)
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func inputRequest(body string) *ctxcv1.CompileRequest {
	return &ctxcv1.CompileRequest{State: requestState(), InputFormat: ctxcv1.InputFormat_INPUT_FORMAT_OPENAI, InputJson: body}
}

// A log sent as a provider body (input_json, as the proxy sends every call)
// is held in max_inflight_bytes by what it decodes to before it is decoded,
// as a state is: one that could never be held is refused with the status
// the same log as a state gets, naming input_json; one that fits is served.
func TestInputJSONHeldLikeAState(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxInflightBytes = 8 << 20
	h := start(t, TransportConfig{Limits: lim})
	messages := make([]string, 5000) // 2.5 KiB each held: 12 MiB
	for i := range messages {
		messages[i] = "ok"
	}
	manyState := requestState()
	for range 5000 {
		manyState.Context.Messages = append(manyState.Context.Messages, &ctxcv1.Message{Id: "n" + strconv.Itoa(len(manyState.Context.Messages)),
			Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "ok"}}}})
	}
	runState := requestState()
	runState.Context.SystemPrompt = strings.Repeat("x", 1<<20)
	for _, tt := range []struct {
		name         string
		state, input *ctxcv1.CompileRequest
		field        string
	}{
		{"5,000 messages", &ctxcv1.CompileRequest{State: manyState}, inputRequest(openAIBody(t, messages...)), "input_json (the bytes in flight"},
		{"a 1 MiB run without a space", &ctxcv1.CompileRequest{State: runState}, inputRequest(openAIBody(t, strings.Repeat("x", 1<<20))),
			"input_json (its longest run of text without a space)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stateErr := h.client.Compile(context.Background(), tt.state)
			_, inputErr := h.client.Compile(context.Background(), tt.input)
			if got, want := refusalOf(inputErr), refusalOf(stateErr); got != want || want.code != codes.ResourceExhausted {
				t.Errorf("input_json refused as %+v, the same log as a state as %+v: want both RESOURCE_EXHAUSTED alike", got, want)
			}
			if msg := status.Convert(inputErr).Message(); !strings.Contains(msg, tt.field) {
				t.Errorf("input_json refused with %q, want it naming %s", msg, tt.field)
			}
		})
	}
	if _, err := h.client.Compile(context.Background(), inputRequest(openAIBody(t, strings.Repeat("x ", 1<<19)))); err != nil {
		t.Errorf("1 MiB of words as input_json: %v", err)
	}
}

// refusal is what a client sees of a refusal: its code and reason.
type refusal struct {
	code   codes.Code
	reason string
}

func refusalOf(err error) refusal {
	st := status.Convert(err)
	r := refusal{code: st.Code()}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			r.reason = info.GetReason()
		}
	}
	return r
}

// What a provider body will hold is reserved before it is imported: with
// another call taking most of max_inflight_bytes, a 1 MB body (4 MB and
// more to hold) waits, then is refused OVERLOADED without reaching the
// pipeline, although its request's own bytes fit; alone, it is served.
func TestInputJSONReservedBeforeImport(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxInflightBytes, lim.MaxQueueWait = 8<<20, 100*time.Millisecond
	record := &admissionRecord{}
	h := start(t, TransportConfig{Limits: lim, Admission: record})
	big := requestState()
	big.Context.SystemPrompt = strings.Repeat("x ", 1800<<10) // 3.6 MB of words
	done := blockedCompile(h, big)

	body := openAIBody(t, strings.Repeat("y ", 1<<19))
	if need := int64(len(body)) + compiler.InputHeldBytes(len(body), 1); need < 4<<20 {
		t.Fatalf("the body holds %d bytes: the test needs it not to fit beside the blocked call", need)
	}
	_, err := h.client.Compile(context.Background(), inputRequest(body))
	wantOverloaded(t, err, "max_inflight_bytes")
	if n := len(h.catalog.Requests()); n != 1 {
		t.Errorf("%d requests reached the pipeline, want only the blocked one", n)
	}
	h.catalog.Release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.Compile(context.Background(), inputRequest(body)); err != nil {
		t.Fatalf("the same body with the room free: %v", err)
	}
	if _, inflight := record.get(); inflight != 0 {
		t.Errorf("%d bytes still in flight after the calls ended", inflight)
	}
}

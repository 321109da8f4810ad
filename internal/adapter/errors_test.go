package adapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/internal/adapter/adaptertest"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestToStatus(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		code    codes.Code
		info    *errdetails.ErrorInfo
		details []proto.Message
	}{
		{
			name: "invalid argument with every violation",
			err: &agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState, Violations: []agentstate.FieldViolation{
				{Field: "state.context.messages[3].parts[0].tool_result.tool_call_id", Description: "required"},
				{Field: "state.model.name", Description: "required"},
			}},
			code: codes.InvalidArgument,
			info: &errdetails.ErrorInfo{Reason: "INVALID_STATE", Domain: "ctxc"},
			details: []proto.Message{&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
				{Field: "state.context.messages[3].parts[0].tool_result.tool_call_id", Description: "required"},
				{Field: "state.model.name", Description: "required"},
			}}},
		},
		{
			name: "unknown profile wrapped by a stage lists the known ones",
			err:  fmt.Errorf("stage normalize: %w", &agentstate.UnknownProfileError{Name: "fast", Known: []string{"budget-aware", "pragmatic"}}),
			code: codes.InvalidArgument,
			info: &errdetails.ErrorInfo{Reason: "UNKNOWN_PROFILE", Domain: "ctxc", Metadata: map[string]string{"profile": "fast", "known_profiles": "budget-aware,pragmatic"}},
			details: []proto.Message{&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
				{Field: "profile", Description: `unknown profile "fast" (known: budget-aware, pragmatic)`},
			}}},
		},
		{
			name: "unknown model",
			err:  &agentstate.UnknownModelError{Model: "mystery-1"},
			code: codes.InvalidArgument,
			info: &errdetails.ErrorInfo{Reason: "UNKNOWN_MODEL", Domain: "ctxc", Metadata: map[string]string{"model": "mystery-1"}},
			details: []proto.Message{&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
				{Field: "state.model.name", Description: (&agentstate.UnknownModelError{Model: "mystery-1"}).Error()},
			}}},
		},
		{
			name: "irreducible context carries the numbers",
			err:  fmt.Errorf("stage compact: %w", &agentstate.IrreducibleError{NeededTokens: 9000, AvailableTokens: 8000, Detail: "pinned"}),
			code: codes.ResourceExhausted,
			info: &errdetails.ErrorInfo{Reason: "CONTEXT_IRREDUCIBLE", Domain: "ctxc", Metadata: map[string]string{"needed_tokens": "9000", "available_tokens": "8000"}},
		},
		{
			name: "limit",
			err:  &agentstate.LimitError{Field: "state.context.messages", Limit: 100000, Got: 100001},
			code: codes.ResourceExhausted,
			info: &errdetails.ErrorInfo{Reason: "LIMIT_EXCEEDED", Domain: "ctxc", Metadata: map[string]string{"field": "state.context.messages", "limit": "100000", "got": "100001"}},
		},
		{
			name: "precondition",
			err:  &agentstate.PreconditionError{Reason: agentstate.ReasonStateVersionUnsupported, Field: "state.schema_version", Detail: "version 2"},
			code: codes.FailedPrecondition,
			info: &errdetails.ErrorInfo{Reason: "STATE_VERSION_UNSUPPORTED", Domain: "ctxc", Metadata: map[string]string{"field": "state.schema_version"}},
			details: []proto.Message{&errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{
				{Type: "STATE_VERSION_UNSUPPORTED", Subject: "state.schema_version", Description: "version 2"},
			}}},
		},
		{
			name: "deadline",
			err:  fmt.Errorf("stage estimate: %w", context.DeadlineExceeded),
			code: codes.DeadlineExceeded,
			info: &errdetails.ErrorInfo{Reason: "DEADLINE_EXCEEDED", Domain: "ctxc"},
		},
		{
			name: "canceled",
			err:  context.Canceled,
			code: codes.Canceled,
			info: &errdetails.ErrorInfo{Reason: "CANCELED", Domain: "ctxc"},
		},
		{
			name: "invariant violation is internal",
			err:  fmt.Errorf("stage compact: policy truncate: %w: orphan result t9", agentstate.ErrInvariant),
			code: codes.Internal,
			info: &errdetails.ErrorInfo{Reason: "INTERNAL", Domain: "ctxc"},
		},
		{
			name: "any other error is internal",
			err:  errors.New("secret path /etc/ctxc/key"),
			code: codes.Internal,
			info: &errdetails.ErrorInfo{Reason: "INTERNAL", Domain: "ctxc"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			err := ToStatus(context.Background(), log, "Compile", tt.err)
			code, info, details := adaptertest.StatusDetails(t, err)
			if code != tt.code {
				t.Errorf("code = %v, want %v", code, tt.code)
			}
			if diff := cmp.Diff(tt.info, info, protocmp.Transform()); diff != "" {
				t.Errorf("ErrorInfo (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.details, details, protocmp.Transform()); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
			if tt.code == codes.Internal {
				msg := status.Convert(err).Message()
				if strings.Contains(msg, tt.err.Error()) || strings.Contains(msg, "orphan") || strings.Contains(msg, "/etc") {
					t.Errorf("internal detail leaked to the client: %q", msg)
				}
				if !strings.Contains(logs.String(), tt.err.Error()) {
					t.Errorf("internal detail not logged; log:\n%s", logs.String())
				}
			}
		})
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{strings.Repeat("a", 100), 40, strings.Repeat("a", 25) + "… (100 bytes)"},
		{strings.Repeat("é", 50), 40, strings.Repeat("é", 12) + "… (100 bytes)"},
		{"\xff\xfe" + strings.Repeat("b", 60), 30, strings.Repeat("b", 14) + "… (62 bytes)"},
	} {
		got := Clip(tt.in, tt.n)
		if got != tt.want || len(got) > tt.n || !utf8.ValidString(got) {
			t.Errorf("Clip(%.20q…, %d) = %q, want %q within %d bytes, valid UTF-8", tt.in, tt.n, got, tt.want, tt.n)
		}
	}
}

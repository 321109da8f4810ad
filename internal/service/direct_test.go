package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestDirectCallsAnswerAsTheNetwork: a direct call gets what the same call
// over a connection gets — the answer, and each refusal of the tap, the
// interceptors and the size limits, with its code.
func TestDirectCallsAnswerAsTheNetwork(t *testing.T) {
	tokens, err := LoadTokens(writeTokenFile(t, "agent-1 0123456789abcdef\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, TransportConfig{Tokens: tokens, MaxMessageBytes: 64 << 10})
	direct := ctxcv1.NewContextCompilerServiceClient(h.transport.DirectConn())
	ok := bearer(context.Background(), "0123456789abcdef")
	big := requestState()
	big.Context.SystemPrompt = strings.Repeat("x", 80<<10)
	tests := []struct {
		name string
		ctx  context.Context
		call func(context.Context, ctxcv1.ContextCompilerServiceClient) (any, error)
		want codes.Code
	}{
		{"list profiles", ok, func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient) (any, error) {
			return c.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
		}, codes.OK},
		{"compile", ok, func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient) (any, error) {
			resp, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: requestState()})
			return resp.GetMessages(), err
		}, codes.OK},
		{"no token", context.Background(), func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient) (any, error) {
			return c.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
		}, codes.Unauthenticated},
		{"invalid request", ok, func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient) (any, error) {
			return c.Compile(ctx, &ctxcv1.CompileRequest{})
		}, codes.InvalidArgument},
		{"request over max_message_bytes", ok, func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient) (any, error) {
			return c.Compile(ctx, &ctxcv1.CompileRequest{State: big})
		}, codes.ResourceExhausted},
		{"past its deadline", ok, func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient) (any, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Millisecond)
			defer cancel()
			time.Sleep(5 * time.Millisecond)
			return c.Compile(ctx, &ctxcv1.CompileRequest{State: requestState()})
		}, codes.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			overNetwork, netErr := tt.call(tt.ctx, h.client)
			directly, directErr := tt.call(tt.ctx, direct)
			if got := status.Code(netErr); got != tt.want {
				t.Fatalf("over the network: %v, want %v", netErr, tt.want)
			}
			if got := status.Code(directErr); got != tt.want {
				t.Errorf("directly: %v, want %v (over the network: %v)", directErr, tt.want, netErr)
			}
			if tt.want == codes.OK {
				if diff := cmp.Diff(overNetwork, directly, protocmp.Transform()); diff != "" {
					t.Errorf("answers (-over the network +directly):\n%s", diff)
				}
			}
		})
	}
	if n := strings.Count(h.logs.String(), "caller=agent-1"); n < 4 {
		t.Errorf("%d call log lines name the caller, want the network's and the direct calls':\n%s", n, h.logs.String())
	}
}

// TestDirectCallsHonourAdmissionAndStop: a direct call takes a slot of
// max_concurrent_calls, is refused when none is free, and stops with the
// server: a call still running past the grace period is cancelled, and
// calls after the stop are UNAVAILABLE.
func TestDirectCallsHonourAdmissionAndStop(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxConcurrentCalls = 1
	h := start(t, TransportConfig{Limits: lim, GracePeriod: 200 * time.Millisecond})
	direct := ctxcv1.NewContextCompilerServiceClient(h.transport.DirectConn())
	done := make(chan error, 1)
	go func() {
		md := metadata.Pairs(mdClientAddress, "192.0.2.7:4242")
		_, err := direct.Compile(metadata.NewOutgoingContext(context.Background(), md), &ctxcv1.CompileRequest{State: requestState(), Profile: "block"})
		done <- err
	}()
	<-h.catalog.Started
	_, err := h.client.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
	wantOverloaded(t, err, "max_concurrent_calls")
	_, err = direct.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
	wantOverloaded(t, err, "max_concurrent_calls")

	h.stop()
	select {
	case err := <-done:
		if status.Code(err) != codes.Canceled {
			t.Errorf("the running direct call ended with %v, want CANCELED", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the running direct call outlived the grace period")
	}
	<-h.served
	h.served <- nil // for the harness's cleanup
	if _, err := direct.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("a direct call after the stop: %v, want UNAVAILABLE", err)
	}
	if !strings.Contains(h.logs.String(), "192.0.2.7") {
		t.Errorf("the call log does not show the client address the caller gave:\n%s", h.logs.String())
	}
}

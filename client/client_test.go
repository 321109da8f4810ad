package client_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// flakyServer answers ListProfiles with UNAVAILABLE until it has been called
// failures times, and Compile always with INVALID_ARGUMENT; it counts calls.
// The behaviour against the real server is tested in integration/client_test.go.
type flakyServer struct {
	ctxcv1.UnimplementedContextCompilerServiceServer
	failures int32
	calls    atomic.Int32
}

func (f *flakyServer) ListProfiles(context.Context, *ctxcv1.ListProfilesRequest) (*ctxcv1.ListProfilesResponse, error) {
	if f.calls.Add(1) <= f.failures {
		return nil, status.Error(codes.Unavailable, "restarting")
	}
	return &ctxcv1.ListProfilesResponse{Profiles: []*ctxcv1.Profile{{Name: "pragmatic"}}}, nil
}

func (f *flakyServer) Compile(context.Context, *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error) {
	f.calls.Add(1)
	return nil, status.Error(codes.InvalidArgument, "bad state")
}

func serve(t *testing.T, impl ctxcv1.ContextCompilerServiceServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	ctxcv1.RegisterContextCompilerServiceServer(s, impl)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		name      string
		failures  int32
		call      func(context.Context, *client.Client) error
		wantCode  codes.Code
		wantCalls int32
	}{
		{"UNAVAILABLE twice, then an answer", 2, listProfiles, codes.OK, 3},
		{"UNAVAILABLE on every attempt: four in all", 10, listProfiles, codes.Unavailable, 4},
		{"INVALID_ARGUMENT is not retried", 0, func(ctx context.Context, c *client.Client) error {
			_, err := c.Compile(ctx, &ctxcv1.CompileRequest{})
			return err
		}, codes.InvalidArgument, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			impl := &flakyServer{failures: tt.failures}
			c, err := client.New(serve(t, impl))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = tt.call(ctx, c)
			if status.Code(err) != tt.wantCode || impl.calls.Load() != tt.wantCalls {
				t.Errorf("got %v after %d calls, want %v after %d", err, impl.calls.Load(), tt.wantCode, tt.wantCalls)
			}
		})
	}
}

func listProfiles(ctx context.Context, c *client.Client) error {
	_, err := c.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
	return err
}

// The defaults come first, so a caller's option wins: here a service config
// without retries.
func TestOptionsOverrideDefaults(t *testing.T) {
	impl := &flakyServer{failures: 1}
	c, err := client.New(serve(t, impl), grpc.WithDefaultServiceConfig(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := listProfiles(context.Background(), c); status.Code(err) != codes.Unavailable || impl.calls.Load() != 1 {
		t.Errorf("got %v after %d calls, want UNAVAILABLE after 1", err, impl.calls.Load())
	}
}

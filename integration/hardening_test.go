package integration

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestTemplateAmplificationRefused: a 1.1 MB Compile whose system prompt holds
// 200,000 placeholders with a 100 KB value once made the server allocate until
// it died. It must be refused as over the message limit, with the server's
// peak memory far below what the expansion would need, and the server must go
// on serving.
func TestTemplateAmplificationRefused(t *testing.T) {
	s := startServer(t)
	req := &ctxcv1.CompileRequest{
		State: &ctxcv1.AgentState{
			Model:   &ctxcv1.ModelSpec{Name: "gpt-4o"},
			Context: &ctxcv1.AgentContext{SystemPrompt: strings.Repeat("{{a}}", 200_000), Messages: []*ctxcv1.Message{{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "hi"}}}}}},
		},
		Options: &ctxcv1.CompileOptions{TemplateVariables: map[string]string{"a": strings.Repeat("x", 100_000)}},
	}
	_, err := s.client().Compile(context.Background(), req)
	wantStatus(t, err, codes.ResourceExhausted, "LIMIT_EXCEEDED")

	resp, err := healthpb.NewHealthClient(s.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("after the request: health %v, %v", resp.GetStatus(), err)
	}
	if peak := peakRSS(t, s.cmd.Process.Pid); peak > 1<<30 {
		t.Errorf("peak RSS %d MiB: the expansion was built", peak>>20)
	}
}

// peakRSS reads a process's peak resident set size (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

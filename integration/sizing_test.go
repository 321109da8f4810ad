//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// sizingConcurrency is the calls in flight during BenchmarkSizing: enough to
// keep a one-core replica busy while a call waits on the network.
const sizingConcurrency = 16

// sizingState is a state of the size an agent sends, with variants whose
// last user turn differs, as successive turns of a session do.
type sizingState struct {
	name     string
	variants []*ctxcv1.CompileRequest
}

// sizingStates are the README's "Sizing" rows: a short chat, the coding-agent
// example (14 messages, a 30K-token tool output among them), a long coding
// session (that example six times over, with fresh ids: past gpt-4o's 128K
// window, so the pragmatic profile compacts it on every call), and the
// coding agent with a 1 MiB tool output (for memory per request in flight).
func sizingStates(t testing.TB) []sizingState {
	coding := readExample(t, "coding-agent.json")
	long := proto.CloneOf(coding)
	long.State.Context.Messages = nil
	for round := range 6 {
		for _, m := range coding.GetState().GetContext().GetMessages() {
			m = proto.CloneOf(m)
			suffix := fmt.Sprintf("-r%d", round)
			m.Id += suffix
			for _, p := range m.GetParts() {
				if c := p.GetToolCall(); c != nil {
					c.Id += suffix
				}
				if r := p.GetToolResult(); r != nil {
					r.ToolCallId += suffix
				}
			}
			long.State.Context.Messages = append(long.State.Context.Messages, m)
		}
	}
	states := []sizingState{
		{name: "chat", variants: variants(readExample(t, "chat.json"))},
		{name: "coding-agent", variants: variants(coding)},
		{name: "long-session", variants: variants(long)},
		{name: "1MiB-tool-output", variants: variants(largeCompile(t, 1<<20, "sizing"))},
	}
	return states
}

// variants appends a different user turn to req, sizingConcurrency times.
func variants(req *ctxcv1.CompileRequest) []*ctxcv1.CompileRequest {
	var out []*ctxcv1.CompileRequest
	for i := range sizingConcurrency {
		v := proto.CloneOf(req)
		v.State.Context.Messages = append(v.State.Context.Messages, &ctxcv1.Message{Id: fmt.Sprintf("sizing-u%d", i), Role: ctxcv1.Role_ROLE_USER,
			Parts: []*ctxcv1.Part{text(fmt.Sprintf("Turn %d: go on with the plan.", i))}})
		out = append(out, v)
	}
	return out
}

// BenchmarkSizing measures what the README's "Deploying" section sizes
// replicas by: Compile calls per second of one `ctxc serve` held to one core
// (GOMAXPROCS=1; the client runs on the other), with sizingConcurrency calls
// in flight, for states of typical sizes; and its peak resident memory, above
// its memory once warm, per MiB of requests in flight. Run it with
// `make bench-sizing`.
func BenchmarkSizing(b *testing.B) {
	for _, st := range sizingStates(b) {
		s := launch(b, launchOptions{env: []string{"GOMAXPROCS=1"}})
		client := s.client()
		// Warm: every call after an agent's first finds the earlier messages' counts cached.
		for _, v := range st.variants {
			if _, err := client.Compile(context.Background(), v); err != nil {
				b.Fatal(err)
			}
		}
		idle := procStatus(b, s.cmd.Process.Pid, "VmRSS:")
		size := proto.Size(st.variants[0])
		b.Run(st.name, func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(sizingConcurrency / 2) // twice GOMAXPROCS(2) goroutines per unit
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := st.variants[next.Add(1)%int64(len(st.variants))]
					if _, err := client.Compile(context.Background(), req); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			peak := peakRSS(b, s.cmd.Process.Pid)
			inflight := float64(sizingConcurrency * size)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s/core")
			b.ReportMetric(float64(size)/1024, "KiB/request")
			b.ReportMetric(float64(idle)/(1<<20), "MiB-warm")
			b.ReportMetric(float64(peak)/(1<<20), "MiB-peak")
			b.ReportMetric(float64(peak-idle)/inflight, "MiB/MiB-in-flight")
			b.ReportMetric(0, "ns/op")
		})
		if strings.Contains(s.logs.String(), `"level":"ERROR"`) {
			b.Errorf("the server logged errors:\n%s", s.logs)
		}
		s.kill()
	}
}

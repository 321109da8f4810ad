package service

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"
	"github.com/contextcompiler/ctxc/internal/components"

	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies"
)

// Benchmarks of the service over real gRPC on loopback, each beside a no-op
// RPC that carries the same payload in the same run (docs/ARCHITECTURE.md,
// "Performance"). Client and server share the process, so allocs/op counts both.
//
//	go test -run '^$' -bench . -benchmem ./server/

const (
	benchModel = "gpt-4o"
	// largeWindow holds the whole 2,000-message state (~800K tokens), so no
	// compaction runs: what is left is the fixed cost of a compile.
	largeWindow = 2_000_000
	// smallWindow is gpt-4o's real window: the 2,000-message state is ~6x over it.
	smallWindow = 128_000
)

// benchRegistry is the service's registry (the one list in
// internal/components), its policies in their deterministic forms and
// sharing one tool-output cache, as serve builds them.
func benchRegistry(b testing.TB) *policies.Registry {
	reg, err := components.Registry(components.Deps{Outputs: diagnose.NewCache()})
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

// TestBenchRegistryBuildsTheBuiltinProfiles: the benchmarks' registry builds
// the built-in profiles (benchmarks do not run in `make test`).
func TestBenchRegistryBuildsTheBuiltinProfiles(t *testing.T) {
	tok, err := tokens.NewService(tokens.DefaultServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.NewCatalog(benchRegistry(t), tok, noop.NewTracerProvider(), pipeline.Config{}); err != nil {
		t.Fatal(err)
	}
}

// noopServiceDesc is a second service on the same server with two baselines:
// Noop only decodes a CompileRequest (the cost of moving the request payload
// over gRPC); Echo also sends the state's messages back as the response, as an
// identity compile would (the payload in both directions, no pipeline).
var noopServiceDesc = grpc.ServiceDesc{
	ServiceName: "ctxc.bench.NoopService",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Noop",
		Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			req := new(ctxcv1.CompileRequest)
			if err := dec(req); err != nil {
				return nil, err
			}
			return &ctxcv1.CompileResponse{}, nil
		},
	}, {
		MethodName: "Echo",
		Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			req := new(ctxcv1.CompileRequest)
			if err := dec(req); err != nil {
				return nil, err
			}
			return &ctxcv1.CompileResponse{Messages: req.GetState().GetContext().GetMessages()}, nil
		},
	}},
	Metadata: "server/bench_test.go",
}

const (
	noopMethod = "/ctxc.bench.NoopService/Noop"
	echoMethod = "/ctxc.bench.NoopService/Echo"
)

// benchServer is the production wiring (adapter.New over a catalog of the
// built-in profiles and a real token service) behind a loopback gRPC server.
type benchServer struct {
	client ctxcv1.ContextCompilerServiceClient
	conn   *grpc.ClientConn
}

// newRealCompiler is the production application layer over the built-in
// profiles and the real token service.
func newRealCompiler(tb testing.TB) *compiler.Service {
	tb.Helper()
	return newRealCompilerWith(tb, pipeline.Config{})
}

// newRealCompilerWith is newRealCompiler with the pipeline's configuration
// cfg (a schedule cache, as ctxc serve keeps).
func newRealCompilerWith(tb testing.TB, cfg pipeline.Config) *compiler.Service {
	tb.Helper()
	tok, err := tokens.NewService(tokens.DefaultServiceConfig())
	if err != nil {
		tb.Fatal(err)
	}
	if err := tok.Preload(); err != nil { // as serve does: no call pays for it
		tb.Fatal(err)
	}
	cat, err := pipeline.NewCatalog(benchRegistry(tb), tok, noop.NewTracerProvider(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	app, err := compiler.New(compiler.Config{Catalog: cat, Counters: tok, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return app
}

// newRealService is the production adapter.Service over newRealCompiler.
func newRealService(tb testing.TB) *adapter.Service {
	tb.Helper()
	svc, err := adapter.New(adapter.Config{Compiler: newRealCompiler(tb), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

func newBenchServer(b *testing.B) *benchServer {
	b.Helper()
	// As served: the production codec, which hashes a whole state's bytes
	// for its state_ref, and a state store keeping every state compiled.
	svc, _ := newRefsService(b, stateref.DefaultConfig())
	return serveBench(b, svc)
}

// serveBench serves svc over gRPC on loopback, with the production codec.
func serveBench(b *testing.B, svc *adapter.Service) *benchServer {
	b.Helper()
	codec := adapter.NewCodec()
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(DefaultMaxMessageBytes), grpc.MaxSendMsgSize(DefaultMaxMessageBytes), grpc.ForceServerCodecV2(codec))
	gs.RegisterService(adapter.ServiceDesc(codec, slog.New(slog.DiscardHandler)), svc)
	gs.RegisterService(&noopServiceDesc, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go gs.Serve(lis) //nolint:errcheck // Stop ends it
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes), grpc.MaxCallSendMsgSize(DefaultMaxMessageBytes)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn.Close()
		gs.Stop()
	})
	return &benchServer{client: ctxcv1.NewContextCompilerServiceClient(conn), conn: conn}
}

func (s *benchServer) compile(b *testing.B, req *ctxcv1.CompileRequest) *ctxcv1.CompileResponse {
	resp, err := s.client.Compile(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

func (s *benchServer) noop(b *testing.B, method string, req *ctxcv1.CompileRequest) {
	if err := s.conn.Invoke(context.Background(), method, req, new(ctxcv1.CompileResponse)); err != nil {
		b.Fatal(err)
	}
}

func (s *benchServer) budget(b *testing.B, state *ctxcv1.AgentState, profile string) *ctxcv1.BudgetResponse {
	resp, err := s.client.Budget(context.Background(), &ctxcv1.BudgetRequest{State: state, Profile: profile})
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

// BenchmarkCompileVsNoop: warm Compile (every count cached after the first
// call) against the no-op RPC with the same payload, returning every message
// and with omit_stable_prefix; the target is compile <= 1.5x noop.
// side-by-side reports the ratios of calls made under the same load (the
// figures of record: run it with -count to see their spread); cold gives
// every call content the cache has not seen.
func BenchmarkCompileVsNoop(b *testing.B) {
	s := newBenchServer(b)
	for _, size := range []struct {
		messages int
		window   uint32
	}{{200, 0}, {2000, largeWindow}} {
		req := &ctxcv1.CompileRequest{State: codingAgentState(size.messages, size.window, "")}
		tokensUsed := s.compile(b, req).GetBudget().GetUsedTokenCount() // warms the cache
		prefix := strconv.Itoa(size.messages) + "msgs/"
		b.Run(prefix+"noop", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(proto.Size(req)))
			for b.Loop() {
				s.noop(b, noopMethod, req)
			}
		})
		b.Run(prefix+"echo", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(proto.Size(req)))
			for b.Loop() {
				s.noop(b, echoMethod, req)
			}
		})
		b.Run(prefix+"compile-warm", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(proto.Size(req)))
			for b.Loop() {
				s.compile(b, req)
			}
			b.ReportMetric(float64(tokensUsed), "tokens")
		})
		omit := &ctxcv1.CompileRequest{State: req.GetState(), OmitStablePrefix: true}
		b.Run(prefix+"compile-warm-omit-prefix", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(proto.Size(omit)))
			var resp *ctxcv1.CompileResponse
			for b.Loop() {
				resp = s.compile(b, omit)
			}
			b.ReportMetric(float64(resp.GetOmittedMessageCount()), "omitted")
		})
		b.Run(prefix+"side-by-side", func(b *testing.B) {
			// One call of each kind per iteration, so the ratios are taken under
			// the same machine load; ns/op is the sum of the four calls.
			var noopT, echoT, fullT, omitT time.Duration
			timed := func(d *time.Duration, call func()) {
				start := time.Now()
				call()
				*d += time.Since(start)
			}
			calls := []func(){
				func() { timed(&noopT, func() { s.noop(b, noopMethod, req) }) },
				func() { timed(&echoT, func() { s.noop(b, echoMethod, req) }) },
				func() { timed(&fullT, func() { s.compile(b, req) }) },
				func() { timed(&omitT, func() { s.compile(b, omit) }) },
			}
			for i := 0; b.Loop(); i++ {
				for j := range calls {
					calls[(i+j)%len(calls)]()
				}
			}
			b.ReportMetric(float64(fullT)/float64(noopT), "compile/noop")
			b.ReportMetric(float64(omitT)/float64(noopT), "omit/noop")
			b.ReportMetric(float64(fullT)/float64(echoT), "compile/echo")
			b.ReportMetric(float64(echoT)/float64(noopT), "echo/noop")
		})
		b.Run(prefix+"compile-cold", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(proto.Size(req)))
			run := 0
			for b.Loop() {
				b.StopTimer()
				run++
				cold := &ctxcv1.CompileRequest{State: codingAgentState(size.messages, size.window, coldSalt(b, run))}
				b.StartTimer()
				s.compile(b, cold)
			}
		})
	}
}

// BenchmarkBudgetRPC is BenchmarkBudget of package tokens over gRPC: a
// 2,000-message state with no count cached, with every count cached, and with
// two new messages appended to a cached state.
func BenchmarkBudgetRPC(b *testing.B) {
	s := newBenchServer(b)
	state := codingAgentState(2000, 0, "")
	tokensUsed := s.budget(b, state, "").GetBudget().GetUsedTokenCount()
	run := 0
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			run++
			cold := codingAgentState(2000, 0, coldSalt(b, run))
			b.StartTimer()
			s.budget(b, cold, "")
		}
		b.ReportMetric(float64(tokensUsed), "tokens")
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.budget(b, state, "")
		}
	})
	b.Run("append2", func(b *testing.B) {
		b.ReportAllocs()
		grown := codingAgentState(2002, 0, "")
		for b.Loop() {
			b.StopTimer()
			run++
			next := proto.CloneOf(state)
			for _, m := range grown.GetContext().GetMessages()[2000:] {
				m = proto.CloneOf(m)
				saltMessage(m, coldSalt(b, run))
				next.Context.Messages = append(next.Context.Messages, m)
			}
			b.StartTimer()
			s.budget(b, next, "")
		}
	})
}

// BenchmarkCompaction compiles a 2,000-message state (~800K tokens) against a
// 128K window with each compacting built-in profile: cold (nothing cached,
// compaction computed), warm (counts cached, compaction computed), and
// persisted (Compact once, then Compile the compacted state), beside the warm
// compile of the same state with a window large enough to need no compaction.
func BenchmarkCompaction(b *testing.B) {
	s := newBenchServer(b)
	large := &ctxcv1.CompileRequest{State: codingAgentState(2000, largeWindow, "")}
	tokensAll := s.compile(b, large).GetBudget().GetUsedTokenCount()
	b.Run("no-compaction-warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.compile(b, large)
		}
		b.ReportMetric(float64(tokensAll), "tokens_before")
		b.ReportMetric(float64(tokensAll), "tokens_after")
	})
	for _, profile := range []string{"budget-aware", "policy-driven"} {
		req := &ctxcv1.CompileRequest{Profile: profile, State: codingAgentState(2000, smallWindow, "")}
		// The default profile counts the whole log; policy-driven's isolation
		// stage would hide old observations before counting.
		before := s.budget(b, req.GetState(), "").GetBudget().GetUsedTokenCount()
		after := s.compile(b, req).GetBudget().GetUsedTokenCount()
		run := 0
		b.Run(profile+"/cold", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				run++
				cold := &ctxcv1.CompileRequest{Profile: profile, State: codingAgentState(2000, smallWindow, coldSalt(b, run))}
				b.StartTimer()
				s.compile(b, cold)
			}
			b.ReportMetric(float64(before), "tokens_before")
			b.ReportMetric(float64(after), "tokens_after")
		})
		b.Run(profile+"/warm", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.compile(b, req)
			}
			b.ReportMetric(float64(before), "tokens_before")
			b.ReportMetric(float64(after), "tokens_after")
		})
		compacted, err := s.client.Compact(context.Background(), &ctxcv1.CompactRequest{Profile: profile, State: req.GetState()})
		if err != nil {
			b.Fatal(err)
		}
		persisted := &ctxcv1.CompileRequest{Profile: profile, State: compacted.GetState()}
		persistedAfter := s.compile(b, persisted).GetBudget().GetUsedTokenCount()
		b.Run(profile+"/persisted", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.compile(b, persisted)
			}
			b.ReportMetric(float64(before), "tokens_before")
			b.ReportMetric(float64(persistedAfter), "tokens_after")
		})
	}
}

// BenchmarkFirstCompileOfLongLog is the first Compile, over gRPC, of a log
// of 100,000 short chat messages (about 1.1M gpt-4o tokens, nine times its
// window) with the default profile: nothing of it counted or scheduled
// before, as on a fresh server (the abuse harness's linear probe times the
// same call on one). Every compaction point drops most of what it reads, so
// it measures what recording those disposals costs.
func BenchmarkFirstCompileOfLongLog(b *testing.B) {
	// As served with no state store: the schedule cache records every
	// compile's disposals, to resume the next compile of a grown log.
	app := newRealCompilerWith(b, pipeline.Config{ScheduleCache: pipeline.NewScheduleCache(pipeline.DefaultScheduleCacheBytes)})
	svc, err := adapter.New(adapter.Config{Compiler: app, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	s := serveBench(b, svc)
	run := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		run++
		salt := coldSalt(b, run)
		st := &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: "Be brief."}}
		for i := range 100_000 {
			role := ctxcv1.Role_ROLE_USER
			if i%2 == 1 {
				role = ctxcv1.Role_ROLE_ASSISTANT
			}
			st.Context.Messages = append(st.Context.Messages, &ctxcv1.Message{Id: "m" + strconv.Itoa(i), Role: role,
				Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "message number " + strconv.Itoa(i) + " says hello" + salt}}}})
		}
		b.StartTimer()
		s.compile(b, &ctxcv1.CompileRequest{State: st})
	}
}

// coldSalt makes content unique to one benchmark run and iteration, so the
// shared token cache has never seen it.
func coldSalt(b *testing.B, run int) string {
	return fmt.Sprintf(" [%s #%d]", b.Name(), run)
}

// codingAgentState generates, deterministically, the log of a coding agent
// with about 400 gpt-4o tokens per message: user turns (some with a pasted
// stack trace), assistant steps with up to three parallel tool calls, and
// their results (source reads, JSON search results, logs, test failures,
// errors), each turn closed by an assistant answer. window 0 keeps gpt-4o's
// own. A non-empty salt is appended to every message's first part.
func codingAgentState(messages int, window uint32, salt string) *ctxcv1.AgentState {
	g := &agentGen{r: rand.New(rand.NewPCG(2024, uint64(messages)))}
	for turn := 1; len(g.msgs) < messages; turn++ {
		g.turn(turn, messages-len(g.msgs))
	}
	model := &ctxcv1.ModelSpec{Name: benchModel}
	if window > 0 {
		model.ContextWindowTokenCount = &window
	}
	last := g.msgs[len(g.msgs)-1].GetExecutionId()
	state := &ctxcv1.AgentState{
		SchemaVersion: 1,
		AgentId:       "bench-coder",
		Model:         model,
		Execution:     &ctxcv1.Execution{Id: last, StepIndex: 3, Status: ctxcv1.ExecutionStatus_EXECUTION_STATUS_COMPLETED},
		Context: &ctxcv1.AgentContext{
			SystemPrompt: benchSystemPrompt + salt,
			Tools:        benchTools,
			Messages:     g.msgs,
		},
	}
	if salt != "" {
		for _, m := range state.Context.Messages {
			saltMessage(m, salt)
		}
	}
	return state
}

func saltMessage(m *ctxcv1.Message, salt string) {
	switch c := m.GetParts()[0].GetContent().(type) {
	case *ctxcv1.Part_Text:
		c.Text += salt
	case *ctxcv1.Part_ToolResult:
		c.ToolResult.Content += salt
	}
}

const benchSystemPrompt = `You are a senior software engineer working in a Go monorepo through tools.
Read code before changing it. Prefer small, reviewable changes. Run the tests of every package you
touch, and the linters, before you say a task is done. Never invent file contents: read them.
When a command fails, read its whole output, explain the cause in one sentence, then fix it.
Keep answers short: what changed, where, and how it was verified.`

var benchTools = []*ctxcv1.ToolDefinition{
	{Name: "read_file", Description: "Read a file of the repository, with line numbers.", ParametersJson: `{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}`},
	{Name: "grep", Description: "Search the repository with a regular expression; returns JSON matches.", ParametersJson: `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`},
	{Name: "run", Description: "Run a shell command in the repository root and return its output.", ParametersJson: `{"type":"object","properties":{"command":{"type":"string"},"timeout_seconds":{"type":"integer"}},"required":["command"]}`},
	{Name: "list_dir", Description: "List a directory as JSON.", ParametersJson: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`},
	{Name: "write_file", Description: "Replace a file's content.", ParametersJson: `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`},
}

var (
	benchNouns = strings.Fields("cache session token budget request handler config store index worker queue parser client " +
		"buffer limit event route summary policy window encoder registry catalog report stage profile message tool")
	benchVerbs = strings.Fields("load parse count compact flush resolve render merge split validate decode encode apply build")
	benchPkgs  = strings.Fields("internal/cache internal/tokens internal/pipeline internal/server api/v1 cmd/agent internal/store pkg/retry")
	benchTypes = strings.Fields("int string []byte error bool time.Duration map[string]int *Config []Entry uint64")
)

type agentGen struct {
	r     *rand.Rand
	msgs  []*ctxcv1.Message
	calls int
}

func (g *agentGen) pick(words []string) string { return words[g.r.IntN(len(words))] }

func (g *agentGen) ident() string {
	n := g.pick(benchNouns)
	return g.pick(benchVerbs) + strings.ToUpper(n[:1]) + n[1:]
}

func (g *agentGen) path() string {
	return g.pick(benchPkgs) + "/" + g.pick(benchNouns) + ".go"
}

func (g *agentGen) add(role ctxcv1.Role, exec string, parts ...*ctxcv1.Part) {
	g.msgs = append(g.msgs, &ctxcv1.Message{Id: "m" + strconv.Itoa(len(g.msgs)+1), Role: role, ExecutionId: exec, Parts: parts})
}

func text(s string) *ctxcv1.Part { return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}} }

// turn adds one user turn and the agent's work on it, in at most room messages.
func (g *agentGen) turn(turn, room int) {
	exec := "e" + strconv.Itoa(turn)
	ask := fmt.Sprintf("The %s tests fail since we changed how %s handles %s. Find out why and fix it; keep the public API.",
		g.pick(benchPkgs), g.ident(), g.pick(benchNouns))
	if g.r.IntN(3) == 0 {
		ask += "\n\nHere is what CI printed:\n" + g.stackTrace()
	}
	g.add(ctxcv1.Role_ROLE_USER, exec, text(ask))
	room--
	for rounds := 1 + g.r.IntN(4); rounds > 0; rounds-- {
		calls := 1 + g.r.IntN(3)
		if room < calls+2 { // keep room for the answer
			break
		}
		parts := []*ctxcv1.Part{text(fmt.Sprintf("I will check %s and how %s uses %s.", g.path(), g.ident(), g.pick(benchNouns)))}
		var results []func()
		for range calls {
			g.calls++
			id := "call_" + strconv.Itoa(g.calls)
			name, args, output, isError := g.toolCall()
			parts = append(parts, &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: name, ArgumentsJson: args}}})
			results = append(results, func() {
				g.add(ctxcv1.Role_ROLE_TOOL, exec, &ctxcv1.Part{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: id, Name: name, Content: output, IsError: isError}}})
			})
		}
		g.add(ctxcv1.Role_ROLE_ASSISTANT, exec, parts...)
		for _, add := range results {
			add()
		}
		room -= calls + 1
	}
	if room > 0 {
		g.add(ctxcv1.Role_ROLE_ASSISTANT, exec, text(g.answer()))
	}
}

// toolCall returns a call's name and arguments and the result it gets.
func (g *agentGen) toolCall() (name, args, output string, isError bool) {
	switch k := g.r.IntN(10); {
	case k < 4:
		p := g.path()
		return "read_file", `{"path":"` + p + `"}`, g.source(20 + g.r.IntN(60)), false
	case k < 6:
		pattern := g.ident()
		return "grep", `{"pattern":"` + pattern + `","path":"."}`, g.grepJSON(pattern, 5+g.r.IntN(20)), false
	case k < 8:
		cmd := "go test ./" + g.pick(benchPkgs) + "/..."
		out, failed := g.testOutput()
		return "run", `{"command":"` + cmd + `"}`, out, failed
	case k < 9:
		return "run", `{"command":"kubectl logs deploy/api --since=10m"}`, g.logs(20 + g.r.IntN(40)), false
	default:
		p := strings.TrimSuffix(g.path(), ".go") + "_util.go"
		return "read_file", `{"path":"` + p + `"}`, `{"error":"open ` + p + `: no such file or directory","exit_code":1}`, true
	}
}

func (g *agentGen) source(lines int) string {
	var sb strings.Builder
	n := 0
	line := func(format string, a ...any) {
		n++
		fmt.Fprintf(&sb, "%5d\t", n)
		fmt.Fprintf(&sb, format, a...)
		sb.WriteByte('\n')
	}
	line("package %s", g.pick(benchNouns))
	line("")
	line("import (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n)")
	for n < lines {
		typ, recv := g.ident(), g.pick(benchNouns)
		line("")
		line("// %s %s the %s of a %s.", typ, g.pick(benchVerbs)+"s", g.pick(benchNouns), g.pick(benchNouns))
		line("type %s struct {", typ)
		for range 2 + g.r.IntN(4) {
			line("\t%s %s", g.pick(benchNouns)+strconv.Itoa(g.r.IntN(9)), g.pick(benchTypes))
		}
		line("}")
		line("")
		line("func (%c *%s) %s(ctx context.Context, %s %s) (%s, error) {", recv[0], typ, g.ident(), recv, g.pick(benchTypes), g.pick(benchTypes))
		for range 3 + g.r.IntN(6) {
			switch g.r.IntN(4) {
			case 0:
				line("\tif %s == nil {\n\t\treturn nil, errors.New(\"%s: %s is required\")\n\t}", recv, g.pick(benchNouns), recv)
			case 1:
				line("\tfor i, v := range %c.%s {\n\t\tif v > %d {\n\t\t\treturn nil, fmt.Errorf(\"%s %%d: %%w\", i, err)\n\t\t}\n\t}", recv[0], g.pick(benchNouns), g.r.IntN(1000), g.pick(benchNouns))
			case 2:
				line("\t%s, err := %c.%s(ctx, %s)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}", g.pick(benchNouns), recv[0], g.ident(), recv, g.ident())
			default:
				line("\t// %s before %s, or the %s is lost.", g.pick(benchVerbs), g.pick(benchVerbs), g.pick(benchNouns))
			}
		}
		line("\treturn %s, nil\n}", recv)
	}
	return sb.String()
}

func (g *agentGen) grepJSON(pattern string, matches int) string {
	var sb strings.Builder
	sb.WriteString(`{"pattern":` + strconv.Quote(pattern) + `,"matches":[`)
	for i := range matches {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"path":%q,"line":%d,"text":%q}`, g.path(), 1+g.r.IntN(900),
			fmt.Sprintf("\t%s, err := %s.%s(ctx, %s)", g.pick(benchNouns), g.pick(benchNouns), pattern, g.pick(benchNouns)))
	}
	sb.WriteString(`],"truncated":false}`)
	return sb.String()
}

func (g *agentGen) testOutput() (string, bool) {
	var sb strings.Builder
	failed := g.r.IntN(3) == 0
	for range 4 + g.r.IntN(12) {
		name := "Test" + g.ident()
		fmt.Fprintf(&sb, "=== RUN   %s\n--- PASS: %s (0.%02ds)\n", name, name, g.r.IntN(100))
	}
	pkg := "github.com/acme/agent/" + g.pick(benchPkgs)
	if failed {
		name := "Test" + g.ident()
		fmt.Fprintf(&sb, "=== RUN   %s\n    %s_test.go:%d: %s() = %d, want %d\n--- FAIL: %s (0.%02ds)\nFAIL\nFAIL\t%s\t0.%03ds\nexit status 1\n",
			name, g.pick(benchNouns), 20+g.r.IntN(400), g.ident(), g.r.IntN(5000), g.r.IntN(5000), name, g.r.IntN(100), pkg, g.r.IntN(1000))
		return sb.String(), true
	}
	fmt.Fprintf(&sb, "PASS\nok  \t%s\t0.%03ds\n", pkg, g.r.IntN(1000))
	return sb.String(), false
}

func (g *agentGen) logs(lines int) string {
	var sb strings.Builder
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"}
	for i := range lines {
		fmt.Fprintf(&sb, "2025-06-%02dT%02d:%02d:%02d.%03dZ %-5s %s: %s %s id=%016x latency=%dms status=%d\n",
			1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), i%60, g.r.IntN(1000), g.pick(levels), g.pick(benchNouns),
			g.pick(benchVerbs), g.pick(benchNouns), g.r.Uint64(), g.r.IntN(2000), []int{200, 200, 201, 404, 500}[g.r.IntN(5)])
	}
	return sb.String()
}

func (g *agentGen) stackTrace() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x%x pc=0x%x]\n\ngoroutine %d [running]:\n",
		g.r.IntN(1<<16), g.r.IntN(1<<24), 1+g.r.IntN(200))
	for range 4 + g.r.IntN(8) {
		fmt.Fprintf(&sb, "github.com/acme/agent/%s.(*%s).%s(0x%x, {0x%x, 0x%x})\n\t/src/%s:%d +0x%x\n",
			g.pick(benchPkgs), g.ident(), g.ident(), g.r.Uint32(), g.r.Uint32(), g.r.IntN(4096), g.path(), 1+g.r.IntN(900), g.r.IntN(1024))
	}
	return sb.String()
}

func (g *agentGen) answer() string {
	p := g.path()
	return fmt.Sprintf("Fixed. %s returned early when the %s was empty, so %s never saw the %s. "+
		"I changed %s to check the %s first and added a test for the empty case.\n\n```go\nif len(%s) == 0 {\n\treturn %s, nil\n}\n```\n\n"+
		"`go test ./...` and `go vet ./...` pass.", g.ident(), g.pick(benchNouns), g.ident(), g.pick(benchNouns), p, g.pick(benchNouns),
		g.pick(benchNouns), g.pick(benchNouns))
}

// BenchmarkStateRefs: the per-turn cost of a runtime that sends its state
// by reference. Side by side, one call of each kind per iteration over
// loopback gRPC through the production transport: a whole 20-message state
// (the bar: by reference at 2,000 messages ≤ 1.5x of it, issue 29), a call
// naming a 2,000-message state by reference with one turn (two messages)
// appended, the same with the stable prefix's reports left out too
// (omit_stable_prefix_reports: a response that does not grow with the log),
// and the same 2,000-message state sent whole. Bytes per call are reported
// for each.
func BenchmarkStateRefs(b *testing.B) {
	svc, _ := newRefsService(b, stateref.DefaultConfig())
	tr := NewTransport(svc, TransportConfig{Logger: slog.New(slog.DiscardHandler)})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- tr.Serve(ctx, lis) }()
	tr.SetServing()
	defer func() { tr.StopBy(time.Now()); stop(); <-served }()
	c, err := client.New(lis.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	small := codingAgentState(20, largeWindow, "")
	large := codingAgentState(2002, largeWindow, "")
	base := growing(large, 2000)
	appended := large.GetContext().GetMessages()[2000:]
	first, err := c.Compile(context.Background(), &ctxcv1.CompileRequest{State: base})
	if err != nil {
		b.Fatal(err)
	}
	smallReq := &ctxcv1.CompileRequest{State: small}
	byRefReq := &ctxcv1.CompileRequest{BaseStateRef: first.GetStateRef(), AppendedMessages: appended, OmitStablePrefix: true}
	leanReq := &ctxcv1.CompileRequest{BaseStateRef: first.GetStateRef(), AppendedMessages: appended, OmitStablePrefix: true, OmitStablePrefixReports: true}
	wholeReq := &ctxcv1.CompileRequest{State: large}
	var byRefBytes, leanBytes int
	for _, req := range []*ctxcv1.CompileRequest{smallReq, byRefReq, leanReq, wholeReq} { // warm every count
		resp, err := c.Compile(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		switch req {
		case byRefReq:
			byRefBytes = proto.Size(resp)
		case leanReq:
			leanBytes = proto.Size(resp)
		}
	}
	var smallT, refT, leanT, wholeT time.Duration
	timed := func(d *time.Duration, req *ctxcv1.CompileRequest) func() {
		return func() {
			start := time.Now()
			if _, err := c.Compile(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			*d += time.Since(start)
		}
	}
	calls := []func(){timed(&smallT, smallReq), timed(&refT, byRefReq), timed(&leanT, leanReq), timed(&wholeT, wholeReq)}
	for i := 0; b.Loop(); i++ {
		for j := range calls {
			calls[(i+j)%len(calls)]()
		}
	}
	b.ReportMetric(float64(refT)/float64(smallT), "ref2000/whole20")
	b.ReportMetric(float64(leanT)/float64(smallT), "ref2000-lean/whole20")
	b.ReportMetric(float64(byRefBytes), "ref-response-bytes")
	b.ReportMetric(float64(leanBytes), "ref-lean-response-bytes")
	b.ReportMetric(float64(wholeT)/float64(smallT), "whole2000/whole20")
	b.ReportMetric(float64(refT)/float64(wholeT), "ref2000/whole2000")
	b.ReportMetric(float64(proto.Size(byRefReq)), "ref-request-bytes")
	b.ReportMetric(float64(proto.Size(wholeReq)), "whole-request-bytes")
}

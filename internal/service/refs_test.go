package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
)

// serveRefs serves the production adapter.Service (built-in profiles, real token
// service) with a state store, over the production transport, so that
// requests are decoded as in production (whole states hashed from their
// bytes).
func serveRefs(t *testing.T, cfg stateref.Config, tc TransportConfig) (ctxcv1.ContextCompilerServiceClient, *stateref.Store) {
	t.Helper()
	c, store, _, _ := serveRefsWith(t, cfg, tc)
	return c, store
}

// serveRefsWith is serveRefs, also returning the adapter.Service and the Transport
// for the calls made in process.
func serveRefsWith(t *testing.T, cfg stateref.Config, tc TransportConfig) (ctxcv1.ContextCompilerServiceClient, *stateref.Store, *adapter.Service, *Transport) {
	t.Helper()
	svc, store := newRefsService(t, cfg)
	tc.Logger = slog.New(slog.DiscardHandler)
	tr := NewTransport(svc, tc)
	lis := bufconn.Listen(1 << 20)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- tr.Serve(ctx, lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes), grpc.MaxCallSendMsgSize(DefaultMaxMessageBytes)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		tr.StopBy(time.Now())
		stop()
		<-served
	})
	tr.SetServing()
	return ctxcv1.NewContextCompilerServiceClient(conn), store, svc, tr
}

// Only a call that came over a connection names and keeps its states: the
// proxy's direct calls and calls of the adapter.Service in process (ctxc eval,
// ctxc compile) never send a reference back, and naming a state that did
// not arrive as bytes costs a whole encoding of it.
func TestOnlyCallsOverAConnectionNameStates(t *testing.T) {
	network, store, svc, tr := serveRefsWith(t, stateref.DefaultConfig(), TransportConfig{})
	direct := ctxcv1.NewContextCompilerServiceClient(tr.DirectConn())
	state := codingAgentState(40, 16000, "")
	event := &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "deploy window opens at 14:00"}}
	for _, tc := range []struct {
		name   string
		naming bool
		call   func(context.Context, proto.Message) (string, error)
	}{
		{"Compile in process", false, func(ctx context.Context, req proto.Message) (string, error) {
			r, err := svc.Compile(ctx, req.(*ctxcv1.CompileRequest))
			return r.GetStateRef(), err
		}},
		{"Compile direct", false, func(ctx context.Context, req proto.Message) (string, error) {
			r, err := direct.Compile(ctx, req.(*ctxcv1.CompileRequest))
			return r.GetStateRef(), err
		}},
		{"Route in process", false, func(ctx context.Context, _ proto.Message) (string, error) {
			r, err := svc.Route(ctx, &ctxcv1.RouteRequest{State: state, Input: event})
			return r.GetStateRef(), err
		}},
		{"Route direct", false, func(ctx context.Context, _ proto.Message) (string, error) {
			r, err := direct.Route(ctx, &ctxcv1.RouteRequest{State: state, Input: event})
			return r.GetStateRef(), err
		}},
		{"Compile over a connection", true, func(ctx context.Context, req proto.Message) (string, error) {
			r, err := network.Compile(ctx, req.(*ctxcv1.CompileRequest))
			return r.GetStateRef(), err
		}},
		{"Route over a connection", true, func(ctx context.Context, _ proto.Message) (string, error) {
			r, err := network.Route(ctx, &ctxcv1.RouteRequest{State: state, Input: event})
			return r.GetStateRef(), err
		}},
	} {
		before := store.Stats().Entries
		ref, err := tc.call(context.Background(), &ctxcv1.CompileRequest{State: state})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		kept := store.Stats().Entries - before
		if named := ref != ""; named != tc.naming || (kept > 0) != tc.naming {
			t.Errorf("%s: state_ref %q and %d states kept; want named and kept: %v", tc.name, ref, kept, tc.naming)
		}
	}
}

// newRefsService is the production adapter.Service (built-in profiles, real token
// service) with a state store of cfg, closed when the test ends.
func newRefsService(tb testing.TB, cfg stateref.Config) (*adapter.Service, *stateref.Store) {
	tb.Helper()
	store, err := stateref.New(cfg, stateref.Redis{}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(store.Close)
	svc, err := adapter.New(adapter.Config{Compiler: newRealCompiler(tb), Logger: slog.New(slog.DiscardHandler), StateRefs: store})
	if err != nil {
		tb.Fatal(err)
	}
	return svc, store
}

// growing returns the first n messages of a coding session as a state
// whose log shares its messages with the others of the same session.
func growing(all *ctxcv1.AgentState, n int) *ctxcv1.AgentState {
	return &ctxcv1.AgentState{SchemaVersion: all.GetSchemaVersion(), AgentId: all.GetAgentId(), Model: all.GetModel(), Execution: all.GetExecution(),
		Context: &ctxcv1.AgentContext{SystemPrompt: all.GetContext().GetSystemPrompt(), Tools: all.GetContext().GetTools(), Messages: all.GetContext().GetMessages()[:n]}}
}

// A runtime compiling its growing state every turn by reference gets what
// it gets sending it whole, for every profile, and sends only what it
// appended after the first call.
func TestCompileByReferenceEqualsWhole(t *testing.T) {
	c, _ := serveRefs(t, stateref.DefaultConfig(), TransportConfig{})
	session := codingAgentState(120, 16000, "")
	for _, profile := range []string{"pragmatic", "budget-aware", "policy-driven"} {
		refs := client.NewStateRefs(c)
		for n := 10; n <= 120; n += 10 {
			st := growing(session, n)
			byRef, err := refs.Compile(context.Background(), &ctxcv1.CompileRequest{State: st, Profile: profile})
			if err != nil {
				t.Fatalf("%s at %d messages: %v", profile, n, err)
			}
			whole, err := c.Compile(context.Background(), &ctxcv1.CompileRequest{State: st, Profile: profile})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(whole, byRef, protocmp.Transform(), protocmp.IgnoreFields(&ctxcv1.StageReport{}, "duration_micros"),
				protocmp.IgnoreFields(&ctxcv1.CompileResponse{}, "state_ref")); diff != "" {
				t.Fatalf("%s at %d messages: by reference differs from whole (-whole +by reference):\n%s", profile, n, diff)
			}
			if byRef.GetStateRef() == "" {
				t.Fatalf("%s: no state_ref", profile)
			}
		}
		if by, misses := refs.Counts(); by != 11 || misses != 0 {
			t.Errorf("%s: %d calls by reference, %d misses; want 11 and 0", profile, by, misses)
		}
	}
}

// Budget, Compact and Route take references too; Route and Compact give the
// reference of the state they return.
func TestBudgetCompactRouteByReference(t *testing.T) {
	c, _ := serveRefs(t, stateref.DefaultConfig(), TransportConfig{})
	ctx := context.Background()
	session := codingAgentState(60, 3000, "")
	refs := client.NewStateRefs(c)
	for _, n := range []int{30, 40} {
		st := growing(session, n)
		byRef, err := refs.Budget(ctx, &ctxcv1.BudgetRequest{State: st})
		if err != nil {
			t.Fatal(err)
		}
		whole, err := c.Budget(ctx, &ctxcv1.BudgetRequest{State: st})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(whole.GetBudget(), byRef.GetBudget(), protocmp.Transform()); diff != "" {
			t.Errorf("budget at %d (-whole +by reference):\n%s", n, diff)
		}
	}
	compacted, err := refs.Compact(ctx, &ctxcv1.CompactRequest{State: growing(session, 50), Profile: "budget-aware"})
	if err != nil {
		t.Fatal(err)
	}
	wholeCompacted, err := c.Compact(ctx, &ctxcv1.CompactRequest{State: growing(session, 50), Profile: "budget-aware"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wholeCompacted.GetState(), compacted.GetState(), protocmp.Transform()); diff != "" {
		t.Errorf("compacted state (-whole +by reference):\n%s", diff)
	}
	if compacted.GetStateRef() == "" || compacted.GetStateRef() != wholeCompacted.GetStateRef() {
		t.Errorf("the same returned state has references %q and %q", compacted.GetStateRef(), wholeCompacted.GetStateRef())
	}
	// Continue from the state Compact returned: a Route by reference.
	next := proto.Clone(compacted.GetState()).(*ctxcv1.AgentState)
	next.Context.Messages = compacted.GetState().GetContext().GetMessages() // the same messages: an append-only log
	routed, err := refs.Route(ctx, &ctxcv1.RouteRequest{State: next, Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "deploy window opens at 14:00"}}})
	if err != nil {
		t.Fatal(err)
	}
	wholeRouted, err := c.Route(ctx, &ctxcv1.RouteRequest{State: next, Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: "deploy window opens at 14:00"}}})
	if err != nil {
		t.Fatal(err)
	}
	// (The event is stamped with the time it was routed.)
	if diff := cmp.Diff(wholeRouted, routed, protocmp.Transform(), protocmp.IgnoreFields(&ctxcv1.Message{}, "create_time"),
		protocmp.IgnoreFields(&ctxcv1.RouteResponse{}, "state_ref")); diff != "" {
		t.Errorf("route (-whole +by reference):\n%s", diff)
	}
	if by, misses := refs.Counts(); by != 3 || misses != 0 {
		t.Errorf("%d calls by reference, %d misses; want 3 (budget, compact, route) and 0", by, misses)
	}
}

func stateRefError(t *testing.T, err error) {
	t.Helper()
	if status.Code(err) != codes.FailedPrecondition || client.Reason(err) != adapter.ReasonStateRefNotFound || !strings.Contains(status.Convert(err).Message(), "send the whole state") {
		t.Fatalf("got %v, want FAILED_PRECONDITION %s saying to send the whole state", err, adapter.ReasonStateRefNotFound)
	}
}

// A reference is bound to the caller it was given to, expires, and is
// evicted past max_bytes; each miss says to send the whole state.
func TestStateRefMisses(t *testing.T) {
	tokens, err := LoadTokens(writeTokenFile(t, "alice "+strings.Repeat("a", 24)+"\nbob "+strings.Repeat("b", 24)+"\n"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c, store := serveRefs(t, stateref.Config{TTL: 300 * time.Millisecond, MaxBytes: 64 << 10, KeyPrefix: "ctxc:state:"}, TransportConfig{Tokens: tokens})
	as := func(name string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+strings.Repeat(name[:1], 24))
	}
	st := requestState()
	resp, err := c.Compile(as("alice"), &ctxcv1.CompileRequest{State: st})
	if err != nil {
		t.Fatal(err)
	}
	byRef := &ctxcv1.CompileRequest{BaseStateRef: resp.GetStateRef(), AppendedMessages: []*ctxcv1.Message{
		{Id: "u2", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "and now?"}}}}}}
	if _, err := c.Compile(as("alice"), byRef); err != nil {
		t.Fatalf("alice's own reference: %v", err)
	}
	_, err = c.Compile(as("bob"), byRef)
	stateRefError(t, err)

	// Past max_bytes the least recently used go.
	big := codingAgentState(60, 0, "")
	if _, err := c.Compile(as("alice"), &ctxcv1.CompileRequest{State: big}); err != nil {
		t.Fatal(err)
	}
	if s := store.Stats(); s.Bytes > 64<<10 {
		t.Errorf("the store holds %d bytes, over max_bytes %d", s.Bytes, 64<<10)
	}
	time.Sleep(350 * time.Millisecond)
	_, err = c.Compile(as("alice"), byRef)
	stateRefError(t, err)
}

// What a call by reference may not combine, and the appended messages'
// violations named as the caller sent them.
func TestStateRefViolations(t *testing.T) {
	c, _ := serveRefs(t, stateref.DefaultConfig(), TransportConfig{})
	resp, err := c.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState()})
	if err != nil {
		t.Fatal(err)
	}
	ref := resp.GetStateRef()
	user := &ctxcv1.Message{Id: "u9", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "go on"}}}}
	tests := []struct {
		name  string
		req   *ctxcv1.CompileRequest
		field string
	}{
		{"appended without a reference", &ctxcv1.CompileRequest{State: requestState(), AppendedMessages: []*ctxcv1.Message{user}}, "appended_messages"},
		{"not a reference", &ctxcv1.CompileRequest{BaseStateRef: strings.Repeat("x", 4096)}, "base_state_ref"},
		{"with a blob", &ctxcv1.CompileRequest{BaseStateRef: ref, StateBlob: []byte("blob")}, "state_blob"},
		{"with input_json", &ctxcv1.CompileRequest{BaseStateRef: ref, InputFormat: ctxcv1.InputFormat_INPUT_FORMAT_OPENAI, InputJson: `{"messages":[]}`}, "input_json"},
		{"with messages in state", &ctxcv1.CompileRequest{BaseStateRef: ref, State: requestState()}, "state.context.messages"},
		{"an appended message without id", &ctxcv1.CompileRequest{BaseStateRef: ref, AppendedMessages: []*ctxcv1.Message{user, {Role: ctxcv1.Role_ROLE_USER, Parts: user.Parts}}}, "appended_messages[1].id"},
		{"an appended id the log has", &ctxcv1.CompileRequest{BaseStateRef: ref, AppendedMessages: []*ctxcv1.Message{{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: user.Parts}}}, "appended_messages[0].id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Compile(context.Background(), tt.req)
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("got %v, want INVALID_ARGUMENT", err)
			}
			var fields []string
			for _, v := range client.FieldViolations(err) {
				fields = append(fields, v.GetField())
			}
			if len(fields) == 0 || fields[0] != tt.field {
				t.Errorf("fields %q, want %q first", fields, tt.field)
			}
			if n := len(status.Convert(err).Message()); n > 1024 {
				t.Errorf("a status message of %d bytes", n)
			}
		})
	}
	// Fields set beside a reference replace the referenced state's.
	got, err := c.Compile(context.Background(), &ctxcv1.CompileRequest{BaseStateRef: ref, State: &ctxcv1.AgentState{Context: &ctxcv1.AgentContext{SystemPrompt: "Be thorough."}}})
	if err != nil {
		t.Fatal(err)
	}
	if first := got.GetMessages()[0].GetParts()[0].GetText(); first != "Be thorough." {
		t.Errorf("system prompt %q, want the one the call set", first)
	}
}

// With max_bytes 0 the server keeps no references.
func TestStateRefsOff(t *testing.T) {
	c, _ := serveRefs(t, stateref.Config{TTL: time.Hour, MaxBytes: 0, KeyPrefix: "ctxc:state:"}, TransportConfig{})
	resp, err := c.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState()})
	if err != nil || resp.GetStateRef() != "" {
		t.Fatalf("state_ref %q, err %v; want none", resp.GetStateRef(), err)
	}
}

// A call that names a reference of its own goes as it is, and the next
// whole state goes whole: what the caller's reference named, only the
// server knows.
func TestStateRefsCallerOwnReference(t *testing.T) {
	c, _ := serveRefs(t, stateref.DefaultConfig(), TransportConfig{})
	ctx := context.Background()
	session := codingAgentState(40, 0, "")
	first, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: growing(session, 20)})
	if err != nil {
		t.Fatal(err)
	}
	refs := client.NewStateRefs(c)
	if _, err := refs.Compile(ctx, &ctxcv1.CompileRequest{BaseStateRef: first.GetStateRef(), AppendedMessages: session.GetContext().GetMessages()[20:30]}); err != nil {
		t.Fatal(err)
	}
	got, err := refs.Compile(ctx, &ctxcv1.CompileRequest{State: growing(session, 40)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.GetMessages()); n != 41 {
		t.Errorf("%d messages, want 41", n)
	}
	if by, _ := refs.Counts(); by != 0 {
		t.Errorf("%d calls by reference after the caller's own; want the whole state sent", by)
	}
}

// Calls by reference share the referenced state's messages: many at once,
// on one reference, each get what the whole state gets, and none changes
// what the others read (run with -race).
func TestConcurrentCallsShareAReference(t *testing.T) {
	c, _ := serveRefs(t, stateref.DefaultConfig(), TransportConfig{})
	ctx := context.Background()
	session := codingAgentState(80, 8000, "")
	first, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: growing(session, 60)})
	if err != nil {
		t.Fatal(err)
	}
	profiles := []string{"pragmatic", "budget-aware", "policy-driven"}
	want := map[string]*ctxcv1.CompileResponse{}
	for _, p := range profiles {
		if want[p], err = c.Compile(ctx, &ctxcv1.CompileRequest{State: growing(session, 80), Profile: p, Options: &ctxcv1.CompileOptions{Render: ctxcv1.RenderFormat_RENDER_FORMAT_ANTHROPIC}}); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 12)
	for i := range 12 {
		go func() {
			p := profiles[i%len(profiles)]
			got, err := c.Compile(ctx, &ctxcv1.CompileRequest{BaseStateRef: first.GetStateRef(), AppendedMessages: session.GetContext().GetMessages()[60:80],
				Profile: p, Options: &ctxcv1.CompileOptions{Render: ctxcv1.RenderFormat_RENDER_FORMAT_ANTHROPIC}})
			if err == nil {
				if diff := cmp.Diff(want[p], got, protocmp.Transform(), protocmp.IgnoreFields(&ctxcv1.StageReport{}, "duration_micros"),
					protocmp.IgnoreFields(&ctxcv1.CompileResponse{}, "state_ref"), protocmp.IgnoreFields(&ctxcv1.CacheStats{}, "hit_count", "miss_count")); diff != "" {
					err = fmt.Errorf("%s: differs from whole (-whole +by reference):\n%s", p, diff)
				}
			}
			errs <- err
		}()
	}
	for range 12 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A call with input_json names no state: its conversation is not the
// state's, so there is nothing a later call could extend.
func TestNoStateRefForProviderInput(t *testing.T) {
	c, store := serveRefs(t, stateref.DefaultConfig(), TransportConfig{})
	resp, err := c.Compile(context.Background(), &ctxcv1.CompileRequest{State: &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}},
		InputFormat: ctxcv1.InputFormat_INPUT_FORMAT_OPENAI, InputJson: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStateRef() != "" || store.Stats().Entries != 0 {
		t.Errorf("state_ref %q, %d states kept; want none", resp.GetStateRef(), store.Stats().Entries)
	}
}

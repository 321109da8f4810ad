//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func exampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	return files
}

// checkCompiled checks what every compile of an example must satisfy.
func checkCompiled(t *testing.T, req *ctxcv1.CompileRequest, resp *ctxcv1.CompileResponse) {
	t.Helper()
	msgs := resp.GetMessages()
	if len(msgs) == 0 || msgs[0].GetRole() != ctxcv1.Role_ROLE_SYSTEM || msgs[0].GetParts()[0].GetText() != req.GetState().GetContext().GetSystemPrompt() {
		t.Fatalf("the system prompt must come first; got %v", msgs[:min(1, len(msgs))])
	}
	b := resp.GetBudget()
	if b.GetUsedTokenCount() == 0 || b.GetContextWindowTokenCount() == 0 || b.GetUsedTokenCount()+b.GetReservedOutputTokenCount()+b.GetRemainingTokenCount() != b.GetContextWindowTokenCount() {
		t.Errorf("budget does not add up: %v", b)
	}
	if got, want := len(resp.GetReport().GetMessages()), len(req.GetState().GetContext().GetMessages()); got != want {
		t.Errorf("report covers %d messages, the log has %d", got, want)
	}
	if want := req.GetProfile(); want != "" && resp.GetReport().GetProfile() != want {
		t.Errorf("report profile %q, want %q", resp.GetReport().GetProfile(), want)
	}
}

// TestAPI drives one server with the Go client and grpcurl.
func TestAPI(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	client := s.client()

	t.Run("compile every example with the Go client", func(t *testing.T) {
		for _, f := range exampleFiles(t) {
			req := readExample(t, filepath.Base(f))
			resp, err := client.Compile(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			checkCompiled(t, req, resp)
		}
	})

	t.Run("compile every example with grpcurl", func(t *testing.T) {
		for _, f := range exampleFiles(t) {
			in, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := grpcurl(t, in, "-plaintext", "-d", "@", s.addr, "ctxc.v1.ContextCompilerService/Compile")
			in.Close()
			if err != nil {
				t.Fatal(err)
			}
			resp := &ctxcv1.CompileResponse{}
			if err := protojson.Unmarshal([]byte(out), resp); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			checkCompiled(t, readExample(t, filepath.Base(f)), resp)
		}
	})

	t.Run("omit the stable prefix", func(t *testing.T) {
		// budget-aware in an 8,000-token window masks the first tool output t1:
		// the system prompt, u1 and a1 stay the caller's, the rest comes back.
		req := readExample(t, "coding-agent.json")
		req.Profile, req.Options = "budget-aware", &ctxcv1.CompileOptions{MaxContextTokenCount: proto.Uint32(8000)}
		full, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		req.OmitStablePrefix = true
		part, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		// The mask was made at a compaction point: the whole context is the
		// stable prefix a cache may keep, though only the first three
		// messages are the caller's own.
		if part.GetOmittedMessageCount() != 3 || int(full.GetReport().GetFirstChangedIndex()) != len(full.GetMessages()) {
			t.Fatalf("omitted %d, first changed %d; want 3 and %d", part.GetOmittedMessageCount(), full.GetReport().GetFirstChangedIndex(), len(full.GetMessages()))
		}
		if diff := cmp.Diff(full.GetMessages()[3:], part.GetMessages(), protocmp.Transform()); diff != "" {
			t.Errorf("returned messages (-full[3:] +omitted):\n%s", diff)
		}
		if ids := []string{full.GetMessages()[1].GetId(), full.GetMessages()[2].GetId()}; ids[0] != req.GetState().GetContext().GetMessages()[0].GetId() || ids[1] != "a1" {
			t.Errorf("the omitted log messages are %v, want the request's first two", ids)
		}
	})

	t.Run("reflection list and describe", func(t *testing.T) {
		out, err := grpcurl(t, nil, "-plaintext", s.addr, "list")
		if err != nil {
			t.Fatal(err)
		}
		for _, svc := range []string{"ctxc.v1.ContextCompilerService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
			if !strings.Contains(out, svc) {
				t.Errorf("list lacks %s:\n%s", svc, out)
			}
		}
		out, err = grpcurl(t, nil, "-plaintext", s.addr, "describe", "ctxc.v1.ContextCompilerService")
		if err != nil {
			t.Fatal(err)
		}
		for _, rpc := range []string{"Compile", "Route", "Compact", "Budget", "CountTokens", "ListProfiles"} {
			if !strings.Contains(out, "rpc "+rpc+" ") {
				t.Errorf("describe lacks rpc %s:\n%s", rpc, out)
			}
		}
	})

	t.Run("health with grpcurl and ctxc health", func(t *testing.T) {
		out, err := grpcurl(t, nil, "-plaintext", s.addr, "grpc.health.v1.Health/Check")
		if err != nil || !strings.Contains(out, `"SERVING"`) {
			t.Fatalf("%v %s", err, out)
		}
		probe := exec.Command(ctxcBinary, "health", "--addr", s.addr)
		got, err := probe.CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != "SERVING" {
			t.Fatalf("ctxc health: %v %s", err, got)
		}
	})

	t.Run("list profiles", func(t *testing.T) {
		resp, err := client.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		defaults := 0
		for _, p := range resp.GetProfiles() {
			names = append(names, p.GetName())
			if p.GetDefault() {
				defaults++
			}
			for _, st := range p.GetStages() {
				if !json.Valid([]byte(st.GetSettingsJson())) {
					t.Errorf("%s/%s settings are not JSON: %s", p.GetName(), st.GetPolicy(), st.GetSettingsJson())
				}
			}
		}
		if diff := cmp.Diff([]string{"budget-aware", "llm-assisted", "policy-driven", "pragmatic"}, names); diff != "" || defaults != 1 {
			t.Errorf("profiles (-want +got):\n%s defaults=%d", diff, defaults)
		}
	})

	t.Run("budget", func(t *testing.T) {
		req := readExample(t, "coding-agent.json")
		resp, err := client.Budget(ctx, &ctxcv1.BudgetRequest{State: req.GetState(), Profile: "budget-aware"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(resp.GetMessages()), len(req.GetState().GetContext().GetMessages()); got != want {
			t.Fatalf("%d per-message counts for %d messages", got, want)
		}
		var sum uint32
		for _, m := range resp.GetMessages() {
			sum += m.GetTokenCount()
		}
		// The big tool output alone is about 30K tokens.
		if sum < 25000 || resp.GetBudget().GetUsedTokenCount() < 25000 {
			t.Errorf("per-message sum %d, used %d: the 30K-token tool output is not counted", sum, resp.GetBudget().GetUsedTokenCount())
		}
		for _, st := range resp.GetReport().GetStages() {
			if st.GetStage() == "decide" || st.GetStage() == "compact" {
				t.Errorf("Budget ran stage %s", st.GetStage())
			}
		}
	})

	t.Run("count tokens", func(t *testing.T) {
		resp, err := client.CountTokens(ctx, &ctxcv1.CountTokensRequest{
			Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"},
			Texts:   []string{"Hello, world!", ""},
			Messages: []*ctxcv1.Message{{Id: "m", Role: ctxcv1.Role_ROLE_USER,
				Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "Hello, world!"}}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		texts, msgs := resp.GetTexts(), resp.GetMessages()
		if len(texts) != 2 || len(msgs) != 1 || texts[0].GetTokenCount() != 4 || texts[1].GetTokenCount() != 0 ||
			msgs[0].GetTokenCount() <= texts[0].GetTokenCount() || resp.GetCounter() != "o200k_base" ||
			resp.GetTotalTokenCount() != texts[0].GetTokenCount()+msgs[0].GetTokenCount() ||
			texts[0].GetProvenance() != ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT {
			t.Errorf("unexpected counts: %v", resp)
		}
		enc, err := client.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Encoding{Encoding: "cl100k_base"}, Texts: []string{"Hello, world!"}})
		if err != nil || enc.GetTotalTokenCount() != 4 || enc.GetCounter() != "cl100k_base" {
			t.Errorf("by encoding: %v %v", enc, err)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		badInput(t, client)
	})

	t.Run("oversized request", func(t *testing.T) {
		req := readExample(t, "chat.json")
		req.State.Context.Messages[0].Parts[0].Content = &ctxcv1.Part_Text{Text: strings.Repeat("x", 40<<20)}
		_, err := client.Compile(ctx, req)
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("40 MiB request: got %v, want RESOURCE_EXHAUSTED", err)
		}
	})

	t.Run("route without a state", func(t *testing.T) {
		_, err := client.Route(ctx, &ctxcv1.RouteRequest{})
		wantStatus(t, err, codes.InvalidArgument, "INVALID_STATE", "state")
	})

	s.waitServing(t) // still healthy after all of the above
	if _, err := client.Compile(ctx, readExample(t, "chat.json")); err != nil {
		t.Fatalf("server broken after bad input: %v", err)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, s.logs)
	}
}

// wantStatus checks code, ErrorInfo reason and BadRequest field paths.
func wantStatus(t *testing.T, err error, code codes.Code, reason string, fields ...string) *errdetails.ErrorInfo {
	t.Helper()
	st := status.Convert(err)
	var info *errdetails.ErrorInfo
	var gotFields []string
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				gotFields = append(gotFields, v.GetField())
			}
		}
	}
	if st.Code() != code || info.GetReason() != reason || info.GetDomain() != "ctxc" {
		t.Fatalf("got %v %v (%s), want %v %s", st.Code(), info, st.Message(), code, reason)
	}
	if diff := cmp.Diff(fields, gotFields); diff != "" {
		t.Errorf("field violations (-want +got):\n%s", diff)
	}
	return info
}

func badInput(t *testing.T, client ctxcv1.ContextCompilerServiceClient) {
	ctx := context.Background()
	base := readExample(t, "coding-agent.json")
	broken := func(change func(s *ctxcv1.AgentState)) *ctxcv1.CompileRequest {
		req := proto.CloneOf(base)
		change(req.State)
		return req
	}
	msgs := func(s *ctxcv1.AgentState) []*ctxcv1.Message { return s.Context.Messages }
	tests := []struct {
		name   string
		req    *ctxcv1.CompileRequest
		code   codes.Code
		reason string
		fields []string
	}{
		{"missing state", &ctxcv1.CompileRequest{}, codes.InvalidArgument, "INVALID_STATE", []string{"state"}},
		{"unknown role number", broken(func(s *ctxcv1.AgentState) { msgs(s)[0].Role = 9 }),
			codes.InvalidArgument, "INVALID_STATE", []string{"state.context.messages[0].role"}},
		{"tool result without tool_call_id", broken(func(s *ctxcv1.AgentState) { msgs(s)[3].Parts[0].GetToolResult().ToolCallId = "" }),
			codes.InvalidArgument, "INVALID_STATE", []string{"state.context.messages[3].parts[0].tool_result.tool_call_id"}},
		{"part with no content", broken(func(s *ctxcv1.AgentState) { msgs(s)[1].Parts[1] = &ctxcv1.Part{} }),
			codes.InvalidArgument, "INVALID_STATE", []string{"state.context.messages[1].parts[1]"}},
		{"duplicate message id", broken(func(s *ctxcv1.AgentState) { msgs(s)[4].Id = "t1" }),
			codes.InvalidArgument, "INVALID_STATE", []string{"state.context.messages[4].id"}},
		{"unsupported schema version", broken(func(s *ctxcv1.AgentState) { s.SchemaVersion = 2 }),
			codes.FailedPrecondition, "STATE_VERSION_UNSUPPORTED", nil},
		{"unknown model without a window", broken(func(s *ctxcv1.AgentState) { s.Model = &ctxcv1.ModelSpec{Name: "no-such-model-xyz"} }),
			codes.InvalidArgument, "UNKNOWN_MODEL", []string{"state.model.name"}},
		{"foreign state blob", &ctxcv1.CompileRequest{StateBlob: []byte{1, 2}}, codes.InvalidArgument, "STATE_BLOB_FOREIGN", []string{"state_blob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Compile(ctx, tt.req)
			wantStatus(t, err, tt.code, tt.reason, tt.fields...)
		})
	}
	t.Run("unknown profile lists the known ones", func(t *testing.T) {
		req := proto.CloneOf(base)
		req.Profile = "fastest"
		_, err := client.Compile(ctx, req)
		info := wantStatus(t, err, codes.InvalidArgument, "UNKNOWN_PROFILE", "profile")
		if got := info.GetMetadata()["known_profiles"]; got != "budget-aware,llm-assisted,policy-driven,pragmatic" {
			t.Errorf("known_profiles = %q", got)
		}
	})
}

// TestCustomProfileFromConfig serves examples/profiles.yaml and uses its
// profile through grpcurl; reflection is turned off by flag at the same time.
func TestCustomProfileFromConfig(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--config", "examples/profiles.yaml", "--reflection=false")
	ctx := context.Background()
	resp, err := s.client().ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var custom *ctxcv1.Profile
	for _, p := range resp.GetProfiles() {
		if p.GetName() == "long-running-coder" {
			custom = p
		}
	}
	if custom == nil || custom.GetSource() != "examples/profiles.yaml" {
		t.Fatalf("custom profile missing or wrong source: %v", resp)
	}
	var policies []string
	for _, st := range custom.GetStages() {
		policies = append(policies, st.GetPolicy())
	}
	want := []string{"normalize", "project", "boundary", "estimate", "token_budget", "message_count", "summarize", "truncate", "repair"}
	if diff := cmp.Diff(want, policies); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}

	// grpcurl needs the protos when reflection is off; a list must fail.
	if _, err := grpcurl(t, nil, "-plaintext", s.addr, "list"); err == nil {
		t.Error("reflection answered although --reflection=false")
	}
	req := readExample(t, "coding-agent.json")
	req.Profile = "long-running-coder"
	body, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := grpcurl(t, bytes.NewReader(body), "-plaintext", "-import-path", "proto", "-proto", "ctxc/v1/compiler_service.proto",
		"-d", "@", s.addr, "ctxc.v1.ContextCompilerService/Compile")
	if err != nil {
		t.Fatal(err)
	}
	got := &ctxcv1.CompileResponse{}
	if err := protojson.Unmarshal([]byte(out), got); err != nil {
		t.Fatal(err)
	}
	checkCompiled(t, req, got)
	isolated := false
	for _, st := range got.GetReport().GetStages() {
		if st.GetPolicy() == "boundary" && st.GetMessagesOut() < st.GetMessagesIn() {
			isolated = true
		}
	}
	if !isolated {
		t.Errorf("the boundary policy did not collapse the finished execution: %v", got.GetReport().GetStages())
	}
}

// TestInvalidConfigListsEveryProblem starts the server with several bad settings.
func TestInvalidConfigListsEveryProblem(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ctxcBinary, "serve", "--listen", "nonsense", "--log-level", "loud", "--max-message-bytes", "5")
	cmd.Env = append(os.Environ(), "CTXC_GRACE_PERIOD=soon")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("serve started with an invalid configuration")
	}
	for _, want := range []string{"listen:", "log_level:", "max_message_bytes:", "CTXC_GRACE_PERIOD:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("problem %q not reported:\n%s", want, out)
		}
	}
}

// TestUnixSocket serves on a Unix socket and probes it with ctxc health.
func TestUnixSocket(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "ctxc.sock")
	s := startServer(t, "--listen", "unix://"+sock)
	if s.addr != "unix://"+sock {
		t.Fatalf("serving on %q, want unix://%s", s.addr, sock)
	}
	out, err := exec.Command(ctxcBinary, "health", "--addr", "unix:"+sock).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "SERVING" {
		t.Fatalf("ctxc health: %v %s", err, out)
	}
	if _, err := s.client().Compile(context.Background(), readExample(t, "chat.json")); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket file left behind: %v", err)
	}
}

// TestHealthWait: `ctxc health --wait`, started before the server, answers
// SERVING once the server is up, and gives up at --timeout when none comes.
func TestHealthWait(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "ctxc.sock")
	var out bytes.Buffer
	probe := exec.Command(ctxcBinary, "health", "--wait", "--timeout", "60s", "--addr", "unix://"+sock)
	probe.Stdout, probe.Stderr = &out, &out
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- probe.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("ctxc health --wait returned before any server started: %v %s", err, out.String())
	case <-time.After(300 * time.Millisecond):
	}
	s := startServer(t, "--listen", "unix://"+sock)
	defer s.stop(t)
	select {
	case err := <-exited:
		if err != nil || strings.TrimSpace(out.String()) != "SERVING" {
			t.Fatalf("ctxc health --wait: %v %q, want SERVING", err, out.String())
		}
	case <-time.After(30 * time.Second):
		probe.Process.Kill()
		t.Fatal("ctxc health --wait did not see the server serving")
	}

	missing := filepath.Join(t.TempDir(), "none.sock")
	start := time.Now()
	got, err := exec.Command(ctxcBinary, "health", "--wait", "--timeout", "400ms", "--addr", "unix://"+missing).CombinedOutput()
	if err == nil || time.Since(start) < 400*time.Millisecond || !strings.Contains(string(got), "none.sock") {
		t.Errorf("ctxc health --wait with no server: %v after %s, %q; want a failure naming the address after --timeout", err, time.Since(start), got)
	}
}

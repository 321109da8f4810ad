//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// httpAddr is the HTTP/JSON address from the server's "serving http" log
// line. The server logs it before "serving", so startServer has already read it.
func (s *server) httpAddr(t testing.TB) string {
	t.Helper()
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	for _, line := range s.logs.lines {
		var entry struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "serving http" {
			return entry.Addr
		}
	}
	t.Fatalf("the server did not log \"serving http\" (started without --http-listen?):\n%s", strings.Join(s.logs.lines, "\n"))
	return ""
}

// needCurl fails a test without curl.
func needCurl(t *testing.T) {
	t.Helper()
	needProgram(t, "curl", "make deps")
}

// post sends body to http://addr/path. A negative length sends it chunked,
// without Content-Length.
func post(t *testing.T, addr, path string, body []byte, length int64) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	if length < 0 {
		req.Body, req.GetBody = io.NopCloser(bytes.NewReader(body)), nil
	}
	req.Header.Set("Content-Type", "application/json")
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func rpcPath(method string) string { return "/ctxc.v1.ContextCompilerService/" + method }

// TestHTTPGatewayAnswersLikeGRPC calls every RPC over HTTP/JSON and over gRPC
// with the same request: the answers must be the same.
func TestHTTPGatewayAnswersLikeGRPC(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--config", "examples/profiles.yaml", "--http-listen", "127.0.0.1:0")
	addr := s.httpAddr(t)
	client := s.client()
	ctx := context.Background()

	chat := readExample(t, "chat.json")
	coding := readExample(t, "coding-agent.json")
	window := uint32(2000)
	gpt := &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai"}}
	route := &ctxcv1.RouteRequest{State: gpt, Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{
		{Role: ctxcv1.Role_ROLE_SYSTEM, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "You are a careful coding agent."}}}},
		{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "The tests in ./store fail."}}}},
	}}}}
	compact := &ctxcv1.CompactRequest{State: coding.GetState(), Profile: "policy-driven", Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}}
	budget := &ctxcv1.BudgetRequest{State: coding.GetState(), Profile: "budget-aware"}
	count := &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"}, Texts: []string{"Hello, world!"}}

	tests := []struct {
		name   string
		method string
		req    proto.Message
		// protoNames sends snake_case field names, which the gateway accepts too.
		protoNames bool
		resp       proto.Message
		viaGRPC    func() (proto.Message, error)
		// wantKey is a lowerCamelCase key the JSON answer must hold.
		wantKey string
	}{
		{"Compile chat", "Compile", chat, false, &ctxcv1.CompileResponse{}, func() (proto.Message, error) { return client.Compile(ctx, chat) }, `"usedTokenCount"`},
		{"Compile coding agent", "Compile", coding, true, &ctxcv1.CompileResponse{}, func() (proto.Message, error) { return client.Compile(ctx, coding) }, `"toolCall"`},
		{"Route", "Route", route, false, &ctxcv1.RouteResponse{}, func() (proto.Message, error) { return client.Route(ctx, route) }, `"appendedMessageIds"`},
		{"Compact", "Compact", compact, true, &ctxcv1.CompactResponse{}, func() (proto.Message, error) { return client.Compact(ctx, compact) }, `"budgetAfter"`},
		{"Budget", "Budget", budget, false, &ctxcv1.BudgetResponse{}, func() (proto.Message, error) { return client.Budget(ctx, budget) }, `"remainingTokenCount"`},
		{"CountTokens", "CountTokens", count, true, &ctxcv1.CountTokensResponse{}, func() (proto.Message, error) { return client.CountTokens(ctx, count) }, `"totalTokenCount"`},
		{"ListProfiles", "ListProfiles", &ctxcv1.ListProfilesRequest{}, false, &ctxcv1.ListProfilesResponse{}, func() (proto.Message, error) {
			return client.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
		}, `"settingsJson"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := protojson.MarshalOptions{UseProtoNames: tt.protoNames}.Marshal(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			code, answer := post(t, addr, rpcPath(tt.method), body, int64(len(body)))
			if code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", code, answer)
			}
			if !bytes.Contains(answer, []byte(tt.wantKey)) {
				t.Errorf("the answer lacks %s (lowerCamelCase names):\n%.500s", tt.wantKey, answer)
			}
			if err := protojson.Unmarshal(answer, tt.resp); err != nil {
				t.Fatalf("%v:\n%.500s", err, answer)
			}
			want, err := tt.viaGRPC()
			if err != nil {
				t.Fatal(err)
			}
			// Times, cache hits and state references are the only things two
			// identical calls may differ in: a reference is hashed from the
			// bytes the state came in (the gateway encodes it itself) or from
			// a state stamped with the time it was routed. Each answer that
			// takes or returns a state carries one.
			if fd := tt.resp.ProtoReflect().Descriptor().Fields().ByName("state_ref"); fd != nil && tt.resp.ProtoReflect().Get(fd).String() == "" {
				t.Errorf("the HTTP answer carries no state_ref")
			}
			if diff := cmp.Diff(want, tt.resp, protocmp.Transform(),
				protocmp.IgnoreMessages(&timestamppb.Timestamp{}, &ctxcv1.CacheStats{}),
				protocmp.IgnoreFields(&ctxcv1.CompileResponse{}, "state_ref"), protocmp.IgnoreFields(&ctxcv1.RouteResponse{}, "state_ref"),
				protocmp.IgnoreFields(&ctxcv1.CompactResponse{}, "state_ref"), protocmp.IgnoreFields(&ctxcv1.BudgetResponse{}, "state_ref"),
				protocmp.IgnoreFields(&ctxcv1.StageReport{}, "duration_micros"),
				protocmp.IgnoreFields(&ctxcv1.ArtifactUsage{}, "cache_hit")); diff != "" {
				t.Errorf("HTTP answer differs from gRPC's (-grpc +http):\n%s", diff)
			}
		})
	}
}

// httpError is what a test checks of an HTTP error answer.
type httpError struct {
	HTTPStatus int
	Code       int32
	Reason     string
	Fields     []string
}

// parseHTTPError decodes the gateway's JSON status and its details.
func parseHTTPError(t *testing.T, httpStatus int, body []byte) httpError {
	t.Helper()
	var st statuspb.Status
	if err := protojson.Unmarshal(body, &st); err != nil {
		t.Fatalf("HTTP %d, not a JSON status: %v\n%s", httpStatus, err, body)
	}
	got := httpError{HTTPStatus: httpStatus, Code: st.GetCode()}
	for _, detail := range st.GetDetails() {
		m, err := detail.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *errdetails.ErrorInfo:
			got.Reason = m.GetReason()
		case *errdetails.BadRequest:
			for _, v := range m.GetFieldViolations() {
				got.Fields = append(got.Fields, v.GetField())
			}
		}
	}
	return got
}

// TestHTTPGatewayErrors checks the HTTP status and JSON status of bad requests.
func TestHTTPGatewayErrors(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	s := startServer(t, "--http-listen", "127.0.0.1:0", "--max-message-bytes", "1048576")
	addr := s.httpAddr(t)
	// Valid JSON just over the limit, so only the size can be the problem.
	oversize := []byte(`{"profile": "` + strings.Repeat("x", limit) + `"}`)
	irreducible := readExample(t, "coding-agent.json")
	window := uint32(400)
	irreducible.Options = &ctxcv1.CompileOptions{MaxContextTokenCount: &window}
	irreducibleJSON, err := protojson.Marshal(irreducible)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		method string
		body   []byte
		// chunked sends the body without Content-Length.
		chunked bool
		want    httpError
	}{
		{"tool result without call id", "Compile",
			[]byte(`{"state": {"model": {"name": "gpt-4o"}, "context": {"messages": [{"id": "t1", "role": "ROLE_TOOL", "parts": [{"tool_result": {"content": "ok"}}]}]}}}`), false,
			httpError{HTTPStatus: 400, Code: 3, Reason: "INVALID_STATE", Fields: []string{"state.context.messages[0].parts[0].tool_result.tool_call_id"}}},
		{"unknown profile", "Budget",
			[]byte(`{"profile": "nope", "state": {"model": {"name": "gpt-4o"}}}`), false,
			httpError{HTTPStatus: 400, Code: 3, Reason: "UNKNOWN_PROFILE", Fields: []string{"profile"}}},
		{"malformed JSON", "Compile", []byte(`{"state": `), false, httpError{HTTPStatus: 400, Code: 3}},
		{"unknown field", "CountTokens", []byte(`{"modle": "gpt-4o"}`), false, httpError{HTTPStatus: 400, Code: 3}},
		{"context that cannot fit", "Compile", irreducibleJSON, false, httpError{HTTPStatus: 429, Code: 8, Reason: "CONTEXT_IRREDUCIBLE"}},
		{"body over the limit", "Compile", oversize, false, httpError{HTTPStatus: 413, Code: 8, Reason: "LIMIT_EXCEEDED"}},
		{"chunked body over the limit", "Compile", oversize, true, httpError{HTTPStatus: 413, Code: 8, Reason: "LIMIT_EXCEEDED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			length := int64(len(tt.body))
			if tt.chunked {
				length = -1
			}
			code, body := post(t, addr, rpcPath(tt.method), tt.body, length)
			if diff := cmp.Diff(tt.want, parseHTTPError(t, code, body)); diff != "" {
				t.Errorf("(-want +got):\n%s\nbody: %s", diff, body)
			}
		})
	}

	t.Run("unknown path", func(t *testing.T) {
		code, body := post(t, addr, "/ctxc.v1.ContextCompilerService/Frobnicate", []byte(`{}`), 2)
		if diff := cmp.Diff(httpError{HTTPStatus: 404, Code: 5}, parseHTTPError(t, code, body)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestHTTPGatewayHealth checks GET /healthz, over a gateway that reaches the
// gRPC server through a Unix socket.
func TestHTTPGatewayHealth(t *testing.T) {
	t.Parallel()
	for _, listen := range []string{"127.0.0.1:0", "unix://" + filepath.Join(t.TempDir(), "ctxc.sock")} {
		t.Run(listen, func(t *testing.T) {
			s := startServer(t, "--listen", listen, "--http-listen", "127.0.0.1:0")
			req, err := http.NewRequest(http.MethodGet, "http://"+s.httpAddr(t)+"/healthz", nil)
			if err != nil {
				t.Fatal(err)
			}
			code, body := do(t, req)
			var got struct{ Status string }
			if err := json.Unmarshal(body, &got); err != nil || code != http.StatusOK || got.Status != "SERVING" {
				t.Errorf("HTTP %d %s (%v), want 200 SERVING", code, body, err)
			}
			code, body = post(t, s.httpAddr(t), rpcPath("ListProfiles"), nil, 0)
			if code != http.StatusOK || !bytes.Contains(body, []byte(`"pragmatic"`)) {
				t.Errorf("ListProfiles: HTTP %d %.300s", code, body)
			}
		})
	}
}

// TestHTTPGatewayStopsWithGRPC checks SIGTERM: the HTTP port shuts down first,
// then the gRPC server, and the process exits 0.
func TestHTTPGatewayStopsWithGRPC(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--http-listen", "127.0.0.1:0")
	if err := s.stop(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, s.logs)
	}
	want := []string{"serving http", "serving", "shutting down http", "shutting down", "stopped"}
	var got []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		var entry struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && slices.Contains(want, entry.Msg) {
			got = append(got, entry.Msg)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

package service

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
)

// startGateway serves the service over gRPC on loopback TCP and the gateway
// in front of it; it returns the gateway's base URL.
func startGateway(t *testing.T, maxMessageBytes int, cfg GatewayConfig) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	app, err := compiler.New(compiler.Config{Catalog: compilertest.NewCatalog(), Counters: compilertest.Counters{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := adapter.New(adapter.Config{Compiler: app, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTransport(svc, TransportConfig{MaxMessageBytes: maxMessageBytes, Logger: log})
	lis, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- tr.Serve(ctx, lis) }()
	tr.SetServing()
	cfg.MaxMessageBytes, cfg.Logger = maxMessageBytes, log
	gw, err := NewGateway(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gw.Serve(hlis)
	t.Cleanup(func() {
		gw.Shutdown(time.Now().Add(time.Second))
		stop()
		<-served
		gw.Close()
	})
	return "http://" + hlis.Addr().String()
}

func TestGateway(t *testing.T) {
	base := startGateway(t, 4<<10, GatewayConfig{})
	tests := []struct {
		name       string
		method     string
		path, body string
		wantCode   int
		want       string // a JSON response, compared as protojson of wantMsg when set
		wantMsg    *ctxcv1.CountTokensResponse
		wantReason string
	}{
		{"an RPC as JSON", http.MethodPost, "/ctxc.v1.ContextCompilerService/CountTokens", `{"encoding":"cl100k_base","texts":["12345678"]}`, http.StatusOK, "",
			&ctxcv1.CountTokensResponse{Counter: "cl100k_base", Texts: []*ctxcv1.TokenCount{{TokenCount: 2, Provenance: ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT}},
				TotalTokenCount: 2, Provenance: ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT}, ""},
		{"a domain error keeps its details", http.MethodPost, "/ctxc.v1.ContextCompilerService/CountTokens", `{"model":"gpt-9"}`, http.StatusBadRequest, "", nil, "UNKNOWN_MODEL"},
		{"an unknown field is an error, not ignored", http.MethodPost, "/ctxc.v1.ContextCompilerService/CountTokens", `{"encodings":"x"}`, http.StatusBadRequest, "", nil, ""},
		{"a body over the limit", http.MethodPost, "/ctxc.v1.ContextCompilerService/CountTokens", `{"texts":["` + strings.Repeat("x", 5<<10) + `"]}`,
			http.StatusRequestEntityTooLarge, "", nil, "LIMIT_EXCEEDED"},
		{"health", http.MethodGet, "/healthz", "", http.StatusOK, `{"status":"SERVING"}`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, base+tt.path, bytes.NewBufferString(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.method == http.MethodPost {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("HTTP %d %s, want %d", resp.StatusCode, body, tt.wantCode)
			}
			switch {
			case tt.wantMsg != nil:
				got := &ctxcv1.CountTokensResponse{}
				if err := protojson.Unmarshal(body, got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.wantMsg, got, protocmp.Transform()); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			case tt.want != "":
				if got := strings.Join(strings.Fields(string(body)), ""); got != tt.want {
					t.Errorf("body %s, want %s", got, tt.want)
				}
			case tt.wantReason != "":
				st := &statuspb.Status{}
				if err := protojson.Unmarshal(body, st); err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				info := &errdetails.ErrorInfo{}
				if len(st.GetDetails()) == 0 || st.GetDetails()[0].UnmarshalTo(info) != nil || info.GetReason() != tt.wantReason || info.GetDomain() != adapter.ErrorDomain {
					t.Errorf("status %v, want ErrorInfo %s/%s first", st, adapter.ErrorDomain, tt.wantReason)
				}
			}
		})
	}
}

func TestDialTarget(t *testing.T) {
	for addr, want := range map[string]string{
		"localhost:50051":       "passthrough:///localhost:50051",
		"unix:///run/ctxc.sock": "unix:///run/ctxc.sock",
		"unix:ctxc.sock":        "unix:ctxc.sock",
	} {
		if got := DialTarget(addr); got != want {
			t.Errorf("DialTarget(%q) = %q, want %q", addr, got, want)
		}
	}
}

//go:build integration

package integration

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP trace receiver that keeps the span names and service
// names of what it receives.
type collector struct {
	mu       sync.Mutex
	spans    []string
	services []string
}

func (c *collector) add(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				c.services = append(c.services, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				c.spans = append(c.spans, sp.GetName())
			}
		}
	}
}

// waitFor waits until a span of that name has arrived.
func (c *collector) waitFor(t *testing.T, name string) (services []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		found, services := slices.Contains(c.spans, name), slices.Clone(c.services)
		c.mu.Unlock()
		if found {
			return services
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Fatalf("no span %q exported; got %v", name, c.spans)
	return nil
}

type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	c *collector
}

func (g grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.c.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestOTLPExportFromStandardVariables starts the binary with only the
// standard OTEL_* variables set and checks that the pipeline's spans reach a
// collector over both OTLP protocols.
func TestOTLPExportFromStandardVariables(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := &collector{}
			var endpoint string
			if protocol == "grpc" {
				lis, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				gs := grpc.NewServer()
				coltracepb.RegisterTraceServiceServer(gs, grpcCollector{c: c})
				go gs.Serve(lis)
				t.Cleanup(gs.Stop)
				endpoint = "http://" + lis.Addr().String()
			} else {
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, err := io.ReadAll(r.Body)
					req := &coltracepb.ExportTraceServiceRequest{}
					if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
						http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
						return
					}
					c.add(req)
					out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
					w.Header().Set("Content-Type", "application/x-protobuf")
					w.Write(out)
				}))
				t.Cleanup(hs.Close)
				endpoint = hs.URL
			}
			s := startServerEnv(t, []string{
				"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
				"OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol,
				"OTEL_SERVICE_NAME=ctxc-otlp-test",
				"OTEL_BSP_SCHEDULE_DELAY=50",
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := s.client().Compile(ctx, readExample(t, "chat.json")); err != nil {
				t.Fatal(err)
			}
			services := c.waitFor(t, "ctxc.stage.budget")
			if !slices.Contains(services, "ctxc-otlp-test") {
				t.Errorf("service names %v, want ctxc-otlp-test from OTEL_SERVICE_NAME", services)
			}
		})
	}
}

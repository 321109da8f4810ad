package service

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// maxStatusBytes is what a whole status (message and details) may take:
// under the 8 KiB of metadata gRPC's C core accepts by default.
const maxStatusBytes = 6 << 10

// TestStatusesAreBounded: however large the values a request carries, the
// status it gets back quotes a bounded prefix of them, lists a bounded
// number of problems, and fits what every gRPC client accepts.
func TestStatusesAreBounded(t *testing.T) {
	h := start(t, TransportConfig{})
	huge := strings.Repeat("x", 1<<20)
	dupIDs := requestState()
	for _, m := range dupIDs.Context.Messages {
		m.Id = huge
	}
	manyBad := requestState()
	for range 1000 {
		manyBad.Context.Messages = append(manyBad.Context.Messages, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_USER})
	}
	tests := []struct {
		name       string
		req        *ctxcv1.CompileRequest
		violations int
	}{
		{"a 1 MiB message id, repeated", &ctxcv1.CompileRequest{State: dupIDs}, -1},
		{"a 1 MiB profile name", &ctxcv1.CompileRequest{State: requestState(), Profile: huge}, -1},
		{"a thousand bad messages", &ctxcv1.CompileRequest{State: manyBad}, adapter.MaxViolations},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.client.Compile(context.Background(), tt.req)
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("%v, want INVALID_ARGUMENT", st.Code())
			}
			if n := len(st.Message()); n > adapter.MaxStatusMessageBytes {
				t.Errorf("a status message of %d bytes", n)
			}
			if n := proto.Size(st.Proto()); n > maxStatusBytes {
				t.Errorf("a status of %d bytes in all", n)
			}
			if tt.violations > 0 {
				var br *errdetails.BadRequest
				for _, d := range st.Details() {
					if d, ok := d.(*errdetails.BadRequest); ok {
						br = d
					}
				}
				v := br.GetFieldViolations()
				if len(v) != tt.violations || !strings.Contains(v[len(v)-1].GetDescription(), "more problems") {
					t.Errorf("%d violations, the last %q; want %d, the last saying how many more", len(v), v[len(v)-1], tt.violations)
				}
			}
		})
	}
}

// TestGatewayErrorsAreBounded: the gateway's own decoding errors quote a
// bounded prefix of the body too.
func TestGatewayErrorsAreBounded(t *testing.T) {
	base := startGateway(t, 4<<20, GatewayConfig{})
	body := `{"state":{"` + strings.Repeat("y", 100<<10) + `":1}}`
	resp, err := http.Post(base+"/ctxc.v1.ContextCompilerService/Compile", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var got struct{ Message string }
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%.200s: %v", raw, err)
	}
	if resp.StatusCode != http.StatusBadRequest || got.Message == "" || len(got.Message) > adapter.MaxStatusMessageBytes || len(raw) > maxStatusBytes {
		t.Errorf("HTTP %d, a %d-byte message in a %d-byte answer", resp.StatusCode, len(got.Message), len(raw))
	}
}

//go:build integration

package integration

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// closedWithin reads conn until the server closes it and reports how long
// that took, or fails the test after limit.
func closedWithin(t *testing.T, conn net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server still held the connection after %s", limit)
	}
	return time.Since(start)
}

// trickle writes data one byte every interval until the connection breaks.
func trickle(conn net.Conn, data string, interval time.Duration) {
	for i := 0; i < len(data); i++ {
		if _, err := conn.Write([]byte{data[i]}); err != nil {
			return
		}
		time.Sleep(interval)
	}
}

// TestSlowHTTPClientsAreCutOff: a body sent at a byte a second was once read
// forever. Headers and bodies now have their timeouts.
func TestSlowHTTPClientsAreCutOff(t *testing.T) {
	t.Parallel() // it waits on the server's timeouts, as the other waiting tests do
	s := startServer(t, "--http-listen", "127.0.0.1:0", "--http-read-header-timeout", "1s", "--http-read-timeout", "2s")
	for name, send := range map[string]string{
		"headers": "POST /ctxc.v1.ContextCompilerService/ListProfiles HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Slow: y\r\n", 1000),
		"body": "POST /ctxc.v1.ContextCompilerService/ListProfiles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{" +
			strings.Repeat(" ", 100000),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", s.httpAddr(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head, body, hasBody := strings.Cut(send, "\r\n\r\n")
			if hasBody {
				// Prompt headers, then a body at ten bytes a second.
				if _, err := conn.Write([]byte(head + "\r\n\r\n")); err != nil {
					t.Fatal(err)
				}
				send = body
			}
			go trickle(conn, send, 100*time.Millisecond)
			took := closedWithin(t, conn, 30*time.Second)
			t.Logf("closed after %s", took.Round(time.Millisecond))
			if hasBody && took < time.Second {
				t.Errorf("the body was cut off after %s, before http_read_timeout could have been the cause", took)
			}
		})
	}
	if _, body := post(t, s.httpAddr(t), rpcPath("ListProfiles"), []byte("{}"), 2); !bytes.Contains(body, []byte("profiles")) {
		t.Errorf("the server is not serving after the slow clients: %s", body)
	}
}

// TestIdleGRPCConnectionsAreClosed: connections that sent nothing, or the
// HTTP/2 preface and SETTINGS and then nothing, were once held forever.
func TestIdleGRPCConnectionsAreClosed(t *testing.T) {
	t.Parallel() // it waits on the server's timeouts, as the other waiting tests do
	s := startServer(t, "--handshake-timeout", "1s", "--max-connection-idle", "1s")
	t.Run("silent from the start", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		closedWithin(t, conn, 30*time.Second)
	})
	t.Run("silent after SETTINGS", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
			t.Fatal(err)
		}
		framer := http2.NewFramer(conn, conn)
		if err := framer.WriteSettings(); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		sawGoAway := false
		for {
			f, err := framer.ReadFrame()
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("the server still held the idle connection after 30s")
				}
				break
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					_ = framer.WriteSettingsAck()
				}
			case *http2.GoAwayFrame:
				sawGoAway = true
			}
		}
		if !sawGoAway {
			t.Error("the server closed the idle connection without a GOAWAY")
		}
	})
}

// TestHTTPBrowserRulesAndClientAddress: a cross-origin text/plain POST once ran
// and answered 200, any Host was served, and HTTP calls were logged with the
// gateway's loopback address.
func TestHTTPBrowserRulesAndClientAddress(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--http-listen", "127.0.0.1:0", "--http-allowed-hosts", "127.0.0.1,localhost", "--http-trusted-proxies", "127.0.0.1")
	url := "http://" + s.httpAddr(t) + rpcPath("ListProfiles")
	send := func(header map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
		for k, v := range header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		code, _ := do(t, req)
		return code
	}
	for name, tt := range map[string]struct {
		header map[string]string
		want   int
	}{
		"a cross-origin text/plain post":   {map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, http.StatusUnsupportedMediaType},
		"a rebinding Host":                 {map[string]string{"Content-Type": "application/json", "Host": "evil.example"}, http.StatusForbidden},
		"a JSON post through a proxy":      {map[string]string{"Content-Type": "application/json", "X-Forwarded-For": "203.0.113.7"}, http.StatusOK},
		"a forged gateway metadata header": {map[string]string{"Content-Type": "application/json", "Grpc-Metadata-Ctxc-Gateway-Client-Address": "6.6.6.6"}, http.StatusOK},
	} {
		if got := send(tt.header); got != tt.want {
			t.Errorf("%s: HTTP %d, want %d", name, got, tt.want)
		}
	}
	if !s.hasLog(`"peer.address":"203.0.113.7"`) {
		t.Errorf("the call through the proxy is not logged with the client's address:\n%s", s.logs)
	}
	if strings.Contains(s.logs.String(), "6.6.6.6") {
		t.Errorf("a client set its own address through gateway metadata:\n%s", s.logs)
	}
}

// TestUndecodableRequestsAreInvalidArgument: malformed protobuf and invalid
// UTF-8 once answered INTERNAL (HTTP 500).
func TestUndecodableRequestsAreInvalidArgument(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--http-listen", "127.0.0.1:0")
	notUTF8 := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("caf\xe9"))
	for name, body := range map[string][]byte{"bad wire format": {0x0a, 0xff, 0xff, 0xff}, "invalid UTF-8": notUTF8} {
		var out []byte
		err := s.conn.Invoke(context.Background(), "/ctxc.v1.ContextCompilerService/CountTokens", body, &out, grpc.ForceCodec(rawCodec{}))
		if st := status.Convert(err); st.Code() != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	for name, body := range map[string][]byte{"invalid UTF-8 in JSON": []byte("{\"encoding\": \"cl100k_base\", \"texts\": [\"caf\xe9\"]}"), "not JSON": []byte("{\"texts\": [")} {
		if code, out := post(t, s.httpAddr(t), rpcPath("CountTokens"), body, int64(len(body))); code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d %s, want 400", name, code, out)
		}
	}
}

// rawCodec sends a request's bytes as they are, so a test can send what no
// protobuf library would encode.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)      { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error { return nil }
func (rawCodec) Name() string                       { return "proto" }

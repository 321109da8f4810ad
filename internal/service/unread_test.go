package service

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// The ledger gives back exactly the in-flight bytes its replies held, once
// each is written, forgiven (sent compressed, or older than the longest
// call) or its connection closes; and counts as unread what is not written.
func TestReplyLedger(t *testing.T) {
	type step struct {
		op   string // owe, pay, forgive, age, close
		n    int64
		held int64
		seq  uint64
	}
	tests := []struct {
		name         string
		steps        []step
		wantUnread   int64
		wantReleased int64
	}{
		{"nothing written", []step{{op: "owe", n: 100, held: 40}}, 100, 0},
		{"partly written holds until done", []step{{op: "owe", n: 100, held: 40}, {op: "pay", n: 99}}, 1, 0},
		{"written", []step{{op: "owe", n: 100, held: 40}, {op: "pay", n: 100}}, 0, 40},
		{"oldest paid first", []step{{op: "owe", n: 100, held: 40}, {op: "owe", n: 50, held: 50}, {op: "pay", n: 120}}, 30, 40},
		{"bytes beyond what is owed pay nothing later", []step{{op: "pay", n: 500}, {op: "owe", n: 100, held: 100}}, 100, 0},
		{"compressed reply forgiven its difference", []step{{op: "owe", n: 100, held: 60}, {op: "forgive", seq: 1, n: 70}, {op: "pay", n: 30}}, 0, 60},
		{"forgiving a reply already written does nothing", []step{{op: "owe", n: 100, held: 60}, {op: "pay", n: 100}, {op: "forgive", seq: 1, n: 70}}, 0, 60},
		{"older than the longest call", []step{{op: "owe", n: 100, held: 60}, {op: "age"}, {op: "owe", n: 10, held: 10}}, 10, 60},
		{"closed connection", []step{{op: "owe", n: 100, held: 60}, {op: "owe", n: 10, held: 10}, {op: "close"}}, 0, 70},
		{"reply after close", []step{{op: "close"}, {op: "owe", n: 100, held: 60}}, 0, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var released int64
			l := &replyLedger{release: func(n int64) { released += n }, expiry: time.Minute, paid: make(chan struct{})}
			now := time.Now()
			for _, s := range tt.steps {
				switch s.op {
				case "owe":
					l.owe(s.n, s.held)
				case "pay":
					l.pay(s.n)
				case "forgive":
					l.forgive(s.seq, s.n)
				case "age": // every reply so far is older than the longest call
					for i := range l.replies {
						l.replies[i].at = now.Add(-2 * time.Minute)
					}
					l.unread(now)
				case "close":
					l.close()
				}
			}
			if unread, _ := l.unread(now); unread != tt.wantUnread {
				t.Errorf("unread %d, want %d", unread, tt.wantUnread)
			}
			if released != tt.wantReleased {
				t.Errorf("released %d in-flight bytes, want %d", released, tt.wantReleased)
			}
		})
	}
}

// rawClient speaks HTTP/2 to the server by hand: it sends calls and reads
// what comes back, but never grants the server flow-control window, as a
// client that does not read its replies.
type rawClient struct {
	t      *testing.T
	mu     sync.Mutex
	fr     *http2.Framer
	enc    *hpack.Encoder
	buf    bytes.Buffer
	next   uint32
	status chan [2]string // stream's grpc-status and ErrorInfo-bearing message
}

func dialRaw(t *testing.T, conn net.Conn) *rawClient {
	c := &rawClient{t: t, fr: http2.NewFramer(conn, conn), next: 1, status: make(chan [2]string, 1000)}
	c.enc = hpack.NewEncoder(&c.buf)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := c.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					c.mu.Lock()
					_ = c.fr.WriteSettingsAck()
					c.mu.Unlock()
				}
			case *http2.MetaHeadersFrame:
				var code, message string
				for _, hf := range f.Fields {
					switch hf.Name {
					case "grpc-status":
						code = hf.Value
					case "grpc-message":
						message = hf.Value
					}
				}
				if code != "" {
					c.status <- [2]string{code, message}
				}
			}
		}
	}()
	return c
}

// call sends one unary call and does not wait for its answer.
func (c *rawClient) call(method string, req proto.Message) {
	c.t.Helper()
	body, err := proto.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	frame := make([]byte, 5+len(body))
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(body)))
	copy(frame[5:], body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Reset()
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method}, {":authority", "ctxc"},
		{"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	id := c.next
	c.next += 2
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.buf.Bytes(), EndHeaders: true}); err != nil {
		c.t.Fatal(err)
	}
	if err := c.fr.WriteData(id, true, frame); err != nil {
		c.t.Fatal(err)
	}
}

// A client that sends small calls with large replies and never reads them
// holds at most max_unread_bytes_per_connection of replies: past it, its
// calls are refused (RESOURCE_EXHAUSTED, the limit named) and the replies
// no longer count in max_inflight_bytes; a well-behaved client beside it is
// served throughout, and what the first held is given back when it leaves.
func TestUnreadRepliesAreBoundedPerConnection(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxUnreadBytesPerConnection, lim.MaxQueueWait = 3<<20, 200*time.Millisecond
	lim.MaxInflightBytes = 1 << 30 // the unread bound, not this one, is under test
	record := &admissionRecord{}
	h := start(t, TransportConfig{Limits: lim, Admission: record})
	// A 10 KB request whose system prompt expands to 1 MB, returned in the reply.
	req := &ctxcv1.CompileRequest{State: requestState(), Options: &ctxcv1.CompileOptions{
		TemplateVariables: map[string]string{"chunk": strings.Repeat("y", 1<<10)}}}
	req.State.Context.SystemPrompt = strings.Repeat("{{chunk}}", 1<<10)
	if proto.Size(req) > 16<<10 {
		t.Fatalf("request of %d bytes, want a small one", proto.Size(req))
	}
	resp, err := h.client.Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	replyBytes := int64(proto.Size(resp))
	if replyBytes < 1<<20 {
		t.Fatalf("reply of %d bytes, want over 1 MiB", replyBytes)
	}

	conn, err := h.listener.Dial()
	if err != nil {
		t.Fatal(err)
	}
	raw := dialRaw(t, conn)
	const calls = 20
	for range calls {
		raw.call("/ctxc.v1.ContextCompilerService/Compile", req)
	}
	refused := 0
	for deadline := time.After(30 * time.Second); refused < calls-4; {
		select {
		case st := <-raw.status:
			if st[0] != "8" || !strings.Contains(st[1], limitUnreadBytes) {
				t.Fatalf("grpc-status %s %q, want 8 (RESOURCE_EXHAUSTED) naming %s", st[0], st[1], limitUnreadBytes)
			}
			refused++
		case <-deadline:
			t.Fatalf("%d of %d calls refused after 30 s", refused, calls)
		}
	}
	// Once the calls still working are done, what stays held is at most the
	// limit plus one reply.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, inflight := record.get()
		if inflight <= lim.MaxUnreadBytesPerConnection+replyBytes+(64<<10) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes in flight held by a client that reads nothing; want at most %d + one reply", inflight, lim.MaxUnreadBytesPerConnection)
		}
	}
	// Another connection is served meanwhile.
	if _, err := h.client.Compile(context.Background(), req); err != nil {
		t.Errorf("a client that reads its replies, beside one that does not: %v", err)
	}
	conn.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, inflight := record.get(); inflight == 0 {
			break
		}
		if time.Now().After(deadline) {
			_, inflight := record.get()
			t.Fatalf("%d bytes still in flight after the client left", inflight)
		}
	}
	rejected, _ := record.get()
	for _, r := range rejected {
		if r != "/ctxc.v1.ContextCompilerService/Compile "+limitUnreadBytes {
			t.Errorf("the observer was told of a refusal %q", r)
		}
	}
	if len(rejected) < refused {
		t.Errorf("the observer was told of %d refusals, the client saw %d", len(rejected), refused)
	}
}

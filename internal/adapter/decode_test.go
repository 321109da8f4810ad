package adapter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestPooledCodecRoundTrips: messages below the pooling threshold and far
// above it, in one buffer or split over several, come back as they went.
func TestPooledCodecRoundTrips(t *testing.T) {
	c := NewPooledCodec()
	for _, size := range []int{0, 100, 40 << 10, 3 << 20} {
		in := &ctxcv1.CompileRequest{Profile: "pragmatic", InputJson: strings.Repeat("x", size)}
		data, err := c.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		whole := data.Materialize()
		for _, split := range []mem.BufferSlice{data, {mem.SliceBuffer(whole[:len(whole)/2]), mem.SliceBuffer(whole[len(whole)/2:])}} {
			out := &ctxcv1.CompileRequest{}
			if err := c.Unmarshal(split, out); err != nil {
				t.Fatalf("%d bytes in %d buffers: %v", size, len(split), err)
			}
			if diff := cmp.Diff(in, out, protocmp.Transform()); diff != "" {
				t.Errorf("%d bytes in %d buffers (-sent +received):\n%s", size, len(split), diff)
			}
		}
		data.Free()
	}
	if _, err := c.Marshal("not a message"); err == nil {
		t.Error("a string marshalled")
	}
}

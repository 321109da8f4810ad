package adapter

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
)

// wireState is what the decoding step learned of a request's whole state
// from its bytes: its reference.
type wireState struct {
	ref  string
	size int64
}

type wireStateKey struct{}

// wholeRefFromWire is the reference of the whole state the call's request
// carried, hashed from its bytes; "" when it was not decoded from the wire
// (an in-process call) or carried none.
func wholeRefFromWire(ctx context.Context) (string, int64) {
	if w, ok := ctx.Value(wireStateKey{}).(*wireState); ok {
		return w.ref, w.size
	}
	return "", 0
}

// namesStates reports whether a call's states are named (state_ref) and
// kept: only for a call that came over a connection. An in-process caller
// (the proxy's direct calls, `ctxc eval`, `ctxc compile`) never names a
// state back, and naming one that did not arrive as bytes costs a whole
// encoding of it: half of a 200-turn session's replay in `ctxc eval`.
func namesStates(ctx context.Context) bool {
	_, wire := ctx.Value(wireStateKey{}).(*wireState)
	return wire && ctx.Value(directCallKey{}) == nil
}

// ReasonMalformedRequest is the ErrorInfo reason of a request that is not a
// valid protobuf message of the method's type.
const ReasonMalformedRequest = "MALFORMED_REQUEST"

// grpc-go answers a request it cannot unmarshal (bad wire format, a string
// that is not UTF-8) with INTERNAL, written before any handler or
// interceptor runs. The fault is the client's, so the API answers
// INVALID_ARGUMENT instead: the server's codec sets such an error aside
// instead of returning it, and each API method's decoding step takes it
// back and returns it as INVALID_ARGUMENT.

// Codec is the proto codec, except that it sets aside the unmarshal
// errors of the API's request messages (their package is ctxc.v1).
type Codec struct {
	pooledCodec
	// failed maps a request message being decoded to its error.
	failed sync.Map
	// wanted maps a request message of the API being decoded to where its
	// whole state's reference goes, hashed from the bytes it came in
	// (encoding the decoded state again to hash it would cost as much as
	// decoding it).
	wanted sync.Map
}

func NewCodec() *Codec {
	return &Codec{pooledCodec: newPooledCodec()}
}

func (c *Codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.decode(data, v, func(b []byte) {
		if to, ok := c.wanted.Load(v); ok {
			if wire := stateField(v, b); wire != nil {
				*to.(*wireState) = wireState{ref: stateref.WholeRef(nil, wire), size: int64(len(wire))}
			}
		}
	})
	if err == nil {
		return nil
	}
	if m, ok := v.(proto.Message); ok && m.ProtoReflect().Descriptor().ParentFile().Package() == "ctxc.v1" {
		c.failed.Store(v, err)
		return nil
	}
	return err
}

// pooledCodec is the proto codec with buffers from a pool whose sizes go up
// in powers of two. gRPC's default pool jumps from 32 KiB to 1 MiB and
// clears a whole buffer on every reuse, so each message of a few tens of
// kilobytes (a conversation the proxy compiles) cleared a megabyte on each
// side of the in-process connection: a tenth of what the proxy adds to a call.
type pooledCodec struct{ pool mem.BufferPool }

// pooledSizes are the pool's buffer sizes, as powers of two: 256 B, then 4
// KiB (a page) to 64 MiB. A larger message is allocated for itself.
var pooledSizes = []uint8{8, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26}

// NewPooledCodec is the proto codec on pooled buffers, for the client side
// of the transport's in-process connection.
func NewPooledCodec() encoding.CodecV2 { return newPooledCodec() }

func newPooledCodec() pooledCodec {
	pool, err := mem.NewBinaryTieredBufferPool(pooledSizes...)
	if err != nil {
		panic(err) // pooledSizes are constant and valid
	}
	return pooledCodec{pool: pool}
}

func (pooledCodec) Name() string { return protocodec.Name }

func (c pooledCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("proto: cannot marshal %T, which is not a proto.Message", v)
	}
	size := proto.Size(m)
	// UseCachedSize is safe: Size just computed it and nothing changes m.
	opts := proto.MarshalOptions{UseCachedSize: true}
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(m)
		return mem.BufferSlice{mem.SliceBuffer(b)}, err
	}
	buf := c.pool.Get(size)
	if _, err := opts.MarshalAppend((*buf)[:0], m); err != nil {
		c.pool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, c.pool)}, nil
}

func (c pooledCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return c.decode(data, v, nil)
}

// decode unmarshals data into v and, when it decoded, shows the bytes to
// decoded (nil: no one) before they go back to the pool.
func (c pooledCodec) decode(data mem.BufferSlice, v any, decoded func([]byte)) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("proto: cannot unmarshal into %T, which is not a proto.Message", v)
	}
	buf := data.MaterializeToBuffer(c.pool)
	defer buf.Free()
	if err := proto.Unmarshal(buf.ReadOnlyData(), m); err != nil {
		return err
	}
	if decoded != nil {
		decoded(buf.ReadOnlyData())
	}
	return nil
}

// stateField returns the bytes of field 1 (the state) of the requests
// that carry a whole state, nil for other messages or when it is absent.
func stateField(v any, b []byte) []byte {
	switch v.(type) {
	case *ctxcv1.CompileRequest, *ctxcv1.RouteRequest, *ctxcv1.BudgetRequest, *ctxcv1.CompactRequest:
	default:
		return nil
	}
	var last []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil
			}
			if last != nil {
				return nil // a state sent in pieces (merged by the decoder): no reference from its bytes
			}
			last, b = v, b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil
		}
		b = b[n:]
	}
	return last
}

// take returns and forgets the error set aside for v.
func (c *Codec) take(v any) error {
	err, ok := c.failed.LoadAndDelete(v)
	if !ok {
		return nil
	}
	return err.(error)
}

// MethodPrefix begins the full name of every method of the API.
var MethodPrefix = "/" + ctxcv1.ContextCompilerService_ServiceDesc.ServiceName + "/"

// PeerAddress is the address of a call's client, "" when unknown.
func PeerAddress(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// ServiceDesc is the API's service description with each method's
// decoding step returning a set-aside unmarshal error as INVALID_ARGUMENT
// (logged here: no interceptor has run yet).
func ServiceDesc(codec *Codec, log *slog.Logger) *grpc.ServiceDesc {
	desc := ctxcv1.ContextCompilerService_ServiceDesc
	desc.Methods = make([]grpc.MethodDesc, len(ctxcv1.ContextCompilerService_ServiceDesc.Methods))
	for i, m := range ctxcv1.ContextCompilerService_ServiceDesc.Methods {
		handler, method := m.Handler, MethodPrefix+m.MethodName
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			wire := &wireState{}
			ctx = context.WithValue(ctx, wireStateKey{}, wire)
			return handler(srv, ctx, func(v any) error {
				codec.wanted.Store(v, wire)
				err := dec(v)
				codec.wanted.Delete(v)
				if err != nil {
					return err
				}
				if err := codec.take(v); err != nil {
					detail := err.Error()
					if i := strings.Index(detail, "proto:"); i >= 0 {
						detail = detail[i:]
					}
					log.InfoContext(ctx, "malformed request refused", "grpc.method", method, "peer.address", PeerAddress(ctx), "error", detail)
					return newStatus(codes.InvalidArgument, "the request is not a valid protobuf message of the method's type: "+detail, ReasonMalformedRequest, nil)
				}
				return nil
			}, interceptor)
		}
		desc.Methods[i] = m
	}
	return &desc
}

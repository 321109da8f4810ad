package service

import (
	"context"
	"net"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// The HTTP gateway reaches the gRPC server through an in-process connection
// (a memory pipe served by the same grpc.Server): its calls pass the same
// tap, interceptors and limits as any other, without a TLS client
// certificate of its own and without a port another local process could
// reach. The server tells the pipe's connections from the network's by
// their type, which nothing outside this package can make.

// inProcessListener hands out the server end of in-process connections.
type inProcessListener struct{ *bufconn.Listener }

func (l inProcessListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return inProcessConn{c}, nil
}

// inProcessConn is the server end of a gateway connection.
type inProcessConn struct{ net.Conn }

// inProcessAuthInfo marks a call that came through the gateway.
type inProcessAuthInfo struct{ credentials.CommonAuthInfo }

func (inProcessAuthInfo) AuthType() string { return "in-process" }

// serverCredentials are the server's transport credentials (TLS, or none)
// for network connections; in-process connections skip the handshake.
type serverCredentials struct {
	credentials.TransportCredentials
}

func newServerCredentials(tls *TLS) credentials.TransportCredentials {
	if tls == nil {
		return serverCredentials{insecure.NewCredentials()}
	}
	return serverCredentials{credentials.NewTLS(tls.Config())}
}

func (c serverCredentials) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if _, ok := conn.(inProcessConn); ok {
		return conn, inProcessAuthInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
	}
	return c.TransportCredentials.ServerHandshake(conn)
}

func (c serverCredentials) Clone() credentials.TransportCredentials {
	return serverCredentials{c.TransportCredentials.Clone()}
}

// inProcessBufferBytes is the pipe's buffer; flow control does the rest.
const inProcessBufferBytes = 1 << 20

// DialInProcess connects to the server through its in-process listener; the
// gateway uses it.
func (t *Transport) DialInProcess(opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	opts = append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return t.inProcess.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(adapter.NewPooledCodec())),
	}, opts...)
	return grpc.NewClient("passthrough:///in-process", opts...)
}

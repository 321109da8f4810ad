package client

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Version is this package's version; it is released with the ctxc service of
// the same version (the repository's VERSION file).
const Version = "0.1.0"

// DefaultMaxMessageBytes is the server's default max_message_bytes.
const DefaultMaxMessageBytes = 32 << 20

// serviceConfig retries UNAVAILABLE: every ctxc RPC is stateless, so a call
// that found the server restarting or a connection gone is safe to repeat.
const serviceConfig = `{
  "methodConfig": [{
    "name": [{"service": "ctxc.v1.ContextCompilerService"}],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.1s",
      "maxBackoff": "2s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`

// Client is a connection to a ctxc server. The embedded generated client
// makes every call; Close releases the connection.
type Client struct {
	ctxcv1.ContextCompilerServiceClient
	conn *grpc.ClientConn
}

// New connects to target ("127.0.0.1:50051", "dns:///ctxc.internal:50051",
// "unix:///run/ctxc.sock") in plaintext with the defaults above. Options come
// after the defaults and win over them: pass
// grpc.WithTransportCredentials(credentials.NewTLS(cfg)) for TLS,
// grpc.WithPerRPCCredentials for a token, grpc.WithDefaultServiceConfig for
// another retry policy. Like grpc.NewClient, New does not wait for the
// connection.
func New(target string, opts ...grpc.DialOption) (*Client, error) {
	defaults := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(serviceConfig),
		// The server accepts pings every 10 s or more, with or without calls.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second, PermitWithoutStream: true}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes), grpc.MaxCallSendMsgSize(DefaultMaxMessageBytes)),
		grpc.WithUserAgent("ctxc-go/" + Version),
	}
	conn, err := grpc.NewClient(target, append(defaults, opts...)...)
	if err != nil {
		return nil, err
	}
	return &Client{ContextCompilerServiceClient: ctxcv1.NewContextCompilerServiceClient(conn), conn: conn}, nil
}

// Conn is the underlying connection (for health checks, or other services on the same port).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

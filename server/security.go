package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/contextcompiler/ctxc/internal/service"
)

// This file checks and builds the settings that protect a shared server:
// TLS, tokens, the refusal to serve in the open, limits and the gateway's
// browser rules.

// validateSecurity checks the TLS and token settings.
func (c *Config) validateSecurity() []error {
	var problems []error
	bad := func(key, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("tls_cert", "tls_cert and tls_key go together; give both or neither")
	}
	if c.TLSClientCA != "" && c.TLSCert == "" {
		bad("tls_client_ca", "client certificates need TLS: give tls_cert and tls_key too")
	}
	for _, f := range []struct{ key, path string }{{"tls_cert", c.TLSCert}, {"tls_key", c.TLSKey}, {"tls_client_ca", c.TLSClientCA}, {"auth_token_file", c.AuthTokenFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			bad(f.key, "%v", err)
		}
	}
	return problems
}

// validateExposure refuses a non-loopback address with neither TLS nor
// authentication, unless insecure is set. Only a server is refused for it
// (Start, Check): the offline commands listen on nothing.
func (c *Config) validateExposure() []error {
	if c.TLSCert != "" || c.AuthTokenFile != "" || c.Insecure {
		return nil
	}
	var problems []error
	// /metrics shares the API's TLS and tokens, so the same rule holds for
	// it, unless metrics_insecure says it is served in the clear on purpose.
	listeners := []struct{ key, addr string }{{"listen", c.Listen}, {"http_listen", c.HTTPListen}}
	if !c.MetricsInsecure {
		listeners = append(listeners, struct{ key, addr string }{"metrics_listen", c.MetricsListen})
	}
	for _, l := range listeners {
		if l.addr != "" && !localAddress(l.addr) {
			problems = append(problems, fmt.Errorf("%s: refusing to serve on %s without TLS or authentication: other machines could call it; set tls_cert and tls_key, or auth_token_file, or insecure to serve it in the open anyway", l.key, l.addr))
		}
	}
	return problems
}

// localAddress reports whether only this machine can reach addr: a Unix
// socket, or a loopback host. An empty or wildcard host is every interface.
func localAddress(addr string) bool {
	if _, ok := service.UnixSocketPath(addr); ok {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// The values of http_ui.
const (
	uiAuto = "auto"
	uiOn   = "on"
	uiOff  = "off"
)

// inspectorEnabled reports whether the HTTP port serves the inspector page:
// when asked to, or by default when only this machine can reach the port.
func (c *Config) inspectorEnabled() bool {
	switch c.HTTPUI {
	case uiOn:
		return c.HTTPListen != ""
	case uiAuto:
		return c.HTTPListen != "" && localAddress(c.HTTPListen)
	}
	return false
}

// validateLimits checks every limit and how they fit together.
func (c *Config) validateLimits() []error {
	var problems []error
	bad := func(key, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	atLeast := func(key string, v, low int64) {
		if v < low {
			bad(key, "%d must be at least %d", v, low)
		}
	}
	atLeast("max_concurrent_calls", int64(c.MaxConcurrentCalls), 1)
	atLeast("max_concurrent_streams", int64(c.MaxConcurrentStreams), 1)
	atLeast("max_connections", int64(c.MaxConnections), 1)
	atLeast("max_connections_per_address", int64(c.MaxConnectionsPerAddress), 0)
	atLeast("max_unread_bytes_per_connection", c.MaxUnreadBytesPerConnection, 0)
	atLeast("max_header_bytes", int64(c.Limits.MaxHeaderBytes), 4096)
	if c.MaxInflightBytes < int64(c.MaxMessageBytes) {
		bad("max_inflight_bytes", "%d must be at least max_message_bytes (%d), so that every request fits alone", c.MaxInflightBytes, c.MaxMessageBytes)
	}
	for _, d := range []struct {
		key    string
		v      time.Duration
		zeroOK bool // 0 turns the limit off
	}{
		{"max_queue_wait", c.MaxQueueWait, true},
		{"default_call_timeout", c.DefaultCallTimeout, false},
		{"max_call_timeout", c.MaxCallTimeout, false},
		{"handshake_timeout", c.HandshakeTimeout, false},
		{"keepalive_min_time", c.KeepaliveMinTime, true},
		{"max_connection_idle", c.MaxConnectionIdle, true},
		{"max_connection_age", c.MaxConnectionAge, true},
		{"http_read_header_timeout", c.HTTPLimits.ReadHeaderTimeout, false},
		{"http_read_timeout", c.HTTPLimits.ReadTimeout, false},
		{"http_write_timeout", c.HTTPLimits.WriteTimeout, false},
		{"http_idle_timeout", c.HTTPLimits.IdleTimeout, false},
		{"drain_delay", c.DrainDelay, true},
	} {
		switch {
		case d.v < 0:
			bad(d.key, "%s must not be negative", d.v)
		case d.v == 0 && !d.zeroOK:
			bad(d.key, "must be more than 0")
		}
	}
	if c.DefaultCallTimeout > c.MaxCallTimeout {
		bad("default_call_timeout", "%s is longer than max_call_timeout (%s)", c.DefaultCallTimeout, c.MaxCallTimeout)
	}
	if c.HTTPListen != "" && c.HTTPLimits.WriteTimeout <= c.MaxCallTimeout {
		bad("http_write_timeout", "%s must be longer than max_call_timeout (%s), or HTTP calls the server lets run would be cut off", c.HTTPLimits.WriteTimeout, c.MaxCallTimeout)
	}
	if c.HTTPLimits.ReadHeaderTimeout > c.HTTPLimits.ReadTimeout {
		bad("http_read_header_timeout", "%s is longer than http_read_timeout (%s)", c.HTTPLimits.ReadHeaderTimeout, c.HTTPLimits.ReadTimeout)
	}
	for _, o := range c.HTTPCORSOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad("http_cors_origins", "%q is not an origin such as https://app.example.com (or *)", o)
		}
	}
	for _, h := range c.HTTPAllowedHosts {
		if strings.ContainsAny(h, "/ ") {
			bad("http_allowed_hosts", "%q is not a host name (with an optional :port)", h)
		}
	}
	if _, err := trustedProxies(c.HTTPTrustedProxies); err != nil {
		bad("http_trusted_proxies", "%v", err)
	}
	return problems
}

// trustedProxies parses addresses and CIDRs into prefixes.
func trustedProxies(items []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range items {
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR such as 10.0.0.0/8", item)
		}
		out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
	}
	return out, nil
}

// security loads the TLS files and the token file the config names (nil when
// it names none).
func (c *Config) security(log *slog.Logger) (*service.TLS, *service.Tokens, error) {
	var (
		tls    *service.TLS
		tokens *service.Tokens
		err    error
	)
	if c.TLSCert != "" {
		if tls, err = service.NewTLS(service.TLSFiles{Cert: c.TLSCert, Key: c.TLSKey, ClientCA: c.TLSClientCA}, log); err != nil {
			return nil, nil, err
		}
	}
	if c.AuthTokenFile != "" {
		if tokens, err = service.LoadTokens(c.AuthTokenFile, log); err != nil {
			return nil, nil, err
		}
	}
	return tls, tokens, nil
}

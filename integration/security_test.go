//go:build integration

package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
	file string // its certificate, PEM
	dir  string
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, pool: x509.NewCertPool(), dir: t.TempDir()}
	ca.pool.AddCert(cert)
	ca.file = filepath.Join(ca.dir, name+".crt")
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue writes a certificate for cn (a server's for 127.0.0.1 when server is
// set, else a client's) and its key; it returns their paths.
func (ca *testCA) issue(t *testing.T, cn string, server bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(ca.dir, cn+".crt"), filepath.Join(ca.dir, cn+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

// writePEM writes atomically (a rename), as secret mounts are updated.
func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// clientTLS trusts ca and presents the given certificate, if any.
func clientTLS(t *testing.T, ca *testCA, certFile, keyFile string) *tls.Config {
	t.Helper()
	cfg := &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

// dialOnce makes one call on a fresh connection with creds.
func dialOnce(t *testing.T, addr string, creds credentials.TransportCredentials, ctx context.Context) error {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = ctxcv1.NewContextCompilerServiceClient(conn).ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
	return err
}

func httpsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func TestTLSWithReload(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "ctxc-test-ca")
	certFile, keyFile := ca.issue(t, "ctxc-1", true)
	s := launch(t, launchOptions{args: []string{"--tls-cert", certFile, "--tls-key", keyFile, "--http-listen", "127.0.0.1:0"},
		creds: credentials.NewTLS(clientTLS(t, ca, "", ""))})
	if _, err := s.client().Compile(context.Background(), readExample(t, "chat.json")); err != nil {
		t.Fatalf("Compile over TLS: %v", err)
	}
	if err := dialOnce(t, s.addr, insecure.NewCredentials(), context.Background()); status.Code(err) != codes.Unavailable {
		t.Errorf("a plaintext client: %v, want UNAVAILABLE (refused)", err)
	}
	resp, err := httpsClient(clientTLS(t, ca, "", "")).Get("https://" + s.httpAddr(t) + "/healthz")
	if err != nil {
		t.Fatalf("HTTPS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HTTPS /healthz: %d", resp.StatusCode)
	}

	// A renewed certificate (same files, replaced by rename) serves the next
	// connections without a restart.
	renewedCert, renewedKey := ca.issue(t, "ctxc-2", true)
	for _, f := range [][2]string{{renewedCert, certFile}, {renewedKey, keyFile}} {
		raw, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1]+".new", raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f[1]+".new", f[1]); err != nil {
			t.Fatal(err)
		}
	}
	served := ""
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		conn, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: ca.pool, NextProtos: []string{"h2"}})
		if err != nil {
			t.Fatal(err)
		}
		served = conn.ConnectionState().PeerCertificates[0].Subject.CommonName
		conn.Close()
		if served == "ctxc-2" {
			break
		}
	}
	if served != "ctxc-2" {
		t.Errorf("after the renewal the server still presents %q\n%s", served, s.logs)
	}
	if !s.hasLog("reloaded tls certificate") {
		t.Errorf("the reload was not logged:\n%s", s.logs)
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "ctxc-test-ca")
	clients := newTestCA(t, "ctxc-clients-ca")
	certFile, keyFile := ca.issue(t, "ctxc", true)
	agentCert, agentKey := clients.issue(t, "agent-7", false)
	strangerCert, strangerKey := ca.issue(t, "stranger", false) // signed, but not by the clients' CA
	s := launch(t, launchOptions{args: []string{"--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", clients.file, "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"},
		creds: credentials.NewTLS(clientTLS(t, ca, agentCert, agentKey))})
	if _, err := s.client().Compile(context.Background(), readExample(t, "chat.json")); err != nil {
		t.Fatalf("Compile with a client certificate: %v", err)
	}
	if !s.hasLog(`"caller":"agent-7"`) {
		t.Errorf("the call log does not name the certificate's caller:\n%s", s.logs)
	}
	for name, cfg := range map[string]*tls.Config{
		"no client certificate":              clientTLS(t, ca, "", ""),
		"a certificate of another CA":        clientTLS(t, ca, strangerCert, strangerKey),
		"the gateway's port, no certificate": clientTLS(t, ca, "", ""),
	} {
		if strings.Contains(name, "gateway") {
			if resp, err := httpsClient(cfg).Post("https://"+s.httpAddr(t)+"/ctxc.v1.ContextCompilerService/ListProfiles", "application/json", strings.NewReader("{}")); err == nil {
				resp.Body.Close()
				t.Errorf("%s: HTTP %d, want the handshake refused", name, resp.StatusCode)
			}
			continue
		}
		if err := dialOnce(t, s.addr, credentials.NewTLS(cfg), context.Background()); status.Code(err) != codes.Unavailable {
			t.Errorf("%s: %v, want UNAVAILABLE (handshake refused)", name, err)
		}
	}
	resp, err := httpsClient(clientTLS(t, ca, agentCert, agentKey)).Post("https://"+s.httpAddr(t)+"/ctxc.v1.ContextCompilerService/ListProfiles", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HTTPS with a client certificate: %d", resp.StatusCode)
	}
	// /metrics has the API's TLS: HTTPS, and a client certificate.
	metrics := s.metricsURL(t)
	if !strings.HasPrefix(metrics, "https://") {
		t.Fatalf("metrics at %s, want HTTPS", metrics)
	}
	if resp, err := httpsClient(clientTLS(t, ca, "", "")).Get(metrics); err == nil {
		resp.Body.Close()
		t.Errorf("/metrics without a client certificate: HTTP %d, want the handshake refused", resp.StatusCode)
	}
	resp, err = httpsClient(clientTLS(t, ca, agentCert, agentKey)).Get(metrics)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/metrics over HTTPS with a client certificate: %d", resp.StatusCode)
	}
}

func TestBearerTokens(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# callers\nagent-php 0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// launch waits for SERVING without a token: health needs none.
	s := launch(t, launchOptions{args: []string{"--auth-token-file", tokens, "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"}})
	ctx := context.Background()
	with := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	for name, ctx := range map[string]context.Context{"none": ctx, "wrong": with("0123456789abcdef0124")} {
		_, err := s.client().Compile(ctx, readExample(t, "chat.json"))
		if st := status.Convert(err); st.Code() != codes.Unauthenticated || st.Message() != "unauthenticated" || len(st.Details()) != 0 {
			t.Errorf("token %s: %v, want UNAUTHENTICATED without detail", name, err)
		}
	}
	if _, err := s.client().Compile(with("0123456789abcdef0123"), readExample(t, "chat.json")); err != nil {
		t.Errorf("the right token: %v", err)
	}
	if resp, err := healthpb.NewHealthClient(s.conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token: %v %v", resp, err)
	}

	url := "http://" + s.httpAddr(t) + "/ctxc.v1.ContextCompilerService/ListProfiles"
	for token, want := range map[string]int{"": http.StatusUnauthorized, "0123456789abcdef0124": http.StatusUnauthorized, "0123456789abcdef0123": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if code, body := do(t, req); code != want {
			t.Errorf("HTTP with token %q: %d %s, want %d", token, code, body, want)
		}
	}
	if resp, err := http.Get("http://" + s.httpAddr(t) + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("HTTP health without a token: %v %v", resp, err)
	}
	// /metrics has the API's tokens.
	for token, want := range map[string]int{"": http.StatusUnauthorized, "0123456789abcdef0124": http.StatusUnauthorized, "0123456789abcdef0123": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, s.metricsURL(t), nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if code, body := do(t, req); code != want {
			t.Errorf("/metrics with token %q: %d %.100s, want %d", token, code, body, want)
		}
	}
	// Every refusal is counted by port, and logged with the client's address.
	req, _ := http.NewRequest(http.MethodGet, s.metricsURL(t), nil)
	req.Header.Set("Authorization", "Bearer 0123456789abcdef0123")
	_, exposed := do(t, req)
	for _, want := range []string{`ctxc_unauthenticated_total{port="grpc"} 2`, `ctxc_unauthenticated_total{port="http"} 2`, `ctxc_unauthenticated_total{port="metrics"} 2`} {
		if !strings.Contains(string(exposed), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !s.hasLog(`"msg":"unauthenticated request refused"`) || !s.hasLog(`"client":"127.0.0.1`) {
		t.Errorf("no refusal logged with the client's address:\n%s", s.logs)
	}
	if !s.hasLog(`"caller":"agent-php"`) || strings.Contains(s.logs.String(), "0123456789abcdef") {
		t.Errorf("the call log must name the caller and never show a token:\n%s", s.logs)
	}
}

func TestRefusesToServeInTheOpen(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(ctxcBinary, "serve", "--listen", "0.0.0.0:0").CombinedOutput()
	if err == nil {
		t.Fatalf("served on 0.0.0.0 without TLS or tokens:\n%s", out)
	}
	want := "listen: refusing to serve on 0.0.0.0:0 without TLS or authentication: other machines could call it; set tls_cert and tls_key, or auth_token_file, or insecure to serve it in the open anyway"
	if !strings.Contains(string(out), want) {
		t.Errorf("output:\n%s\nwant the line\n%s", out, want)
	}
	out, err = exec.Command(ctxcBinary, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0").CombinedOutput()
	if want := "metrics_listen: refusing to serve on 0.0.0.0:0 without TLS or authentication"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("metrics in the open: %v\n%s\nwant the line %s", err, out, want)
	}
	// --insecure says the operator means it.
	s := launch(t, launchOptions{args: []string{"--listen", "0.0.0.0:0", "--insecure"}, noListen: true})
	if _, err := s.client().ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{}); err != nil {
		t.Error(err)
	}
}

package service

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
)

// TLSFiles are the PEM files of the server's TLS: its certificate chain and
// key, and optionally the CAs that sign client certificates (mTLS: a client
// without a certificate from one of them is refused during the handshake).
type TLSFiles struct {
	Cert, Key, ClientCA string
}

// TLS serves the certificate of TLSFiles to the gRPC and HTTP listeners and
// reloads it, and the client CAs, when the files change: each handshake
// looks at the files at most once a second. A reload that fails (a file
// half written) keeps the loaded certificate and logs a warning.
type TLS struct {
	files    TLSFiles
	material *reloading[*tls.Config]
}

// NewTLS loads the files; any problem stops start-up with the file named.
func NewTLS(files TLSFiles, log *slog.Logger) (*TLS, error) {
	if log == nil {
		log = slog.Default()
	}
	paths := []string{files.Cert, files.Key}
	if files.ClientCA != "" {
		paths = append(paths, files.ClientCA)
	}
	m, err := newReloading("tls certificate", paths, func() (*tls.Config, error) { return loadTLS(files) }, log)
	if err != nil {
		return nil, err
	}
	return &TLS{files: files, material: m}, nil
}

// MutualTLS reports whether clients must present a certificate.
func (t *TLS) MutualTLS() bool { return t.files.ClientCA != "" }

// Config is the server-side tls.Config, whose handshakes use the current
// files; nextProtos are offered for ALPN (gRPC adds "h2" itself).
func (t *TLS) Config(nextProtos ...string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: nextProtos,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			c := t.material.get().Clone()
			c.NextProtos = nextProtos
			return c, nil
		},
	}
}

// loadTLS reads the files into a complete server config.
func loadTLS(files TLSFiles) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	if err != nil {
		return nil, fmt.Errorf("tls_cert %s / tls_key %s: %w", files.Cert, files.Key, err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if files.ClientCA == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(files.ClientCA)
	if err != nil {
		return nil, fmt.Errorf("tls_client_ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls_client_ca %s: %w", files.ClientCA, errors.New("no PEM certificate in the file"))
	}
	cfg.ClientCAs = pool
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	return cfg, nil
}

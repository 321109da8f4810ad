package service

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// MinTokenLength is the shortest bearer token the token file may hold.
const MinTokenLength = 16

// callerName is what a token's name may be: it ends up in log lines and
// metric labels.
var callerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// Tokens authenticates bearer tokens against a token file: one caller a
// line, "<name> <token>", blank lines and lines starting with # ignored. The
// file is read again when it changes (checked at most once a second, on a
// call), so tokens are added and revoked without a restart (all of them by
// a file that holds only comments); a file that no longer parses, or is
// empty, keeps the tokens loaded and logs a warning.
type Tokens struct {
	file *reloading[[]tokenEntry]
}

type tokenEntry struct {
	name string
	hash [sha256.Size]byte
}

// LoadTokens reads the token file; every bad line is reported at once.
func LoadTokens(path string, log *slog.Logger) (*Tokens, error) {
	if log == nil {
		log = slog.Default()
	}
	started := false
	r, err := newReloading("auth token file", []string{path}, func() ([]tokenEntry, error) {
		entries, err := readTokenFile(path, started)
		if err == nil && len(entries) == 0 {
			log.Warn("the auth token file holds no token: every call but health is refused until one is added", "file", path)
		}
		return entries, err
	}, log)
	if err != nil {
		return nil, fmt.Errorf("auth_token_file: %w", err)
	}
	started = true
	return &Tokens{file: r}, nil
}

// readTokenFile reads the token file. A server starts only with at least
// one token; once serving, a file rewritten to hold none but comments
// revokes them all, while an empty file is taken for one being written.
func readTokenFile(path string, serving bool) ([]tokenEntry, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if serving && len(raw) == 0 {
		return nil, fmt.Errorf("%s: empty (being written?); to revoke every token, leave a comment line in it", path)
	}
	var (
		entries  []tokenEntry
		problems []error
		names    = map[string]int{}
		hashes   = map[[sha256.Size]byte]int{}
	)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		bad := func(format string, args ...any) {
			problems = append(problems, fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, args...)))
		}
		if len(fields) != 2 {
			bad("want \"<name> <token>\", got %d fields", len(fields))
			continue
		}
		name, token := fields[0], fields[1]
		if !callerName.MatchString(name) {
			bad("name %q: use 1 to 64 letters, digits, '.', '_', '@' or '-'", name)
		}
		if len(token) < MinTokenLength {
			// The token itself is never printed.
			bad("the token of %q has %d characters; use at least %d (openssl rand -hex 32 makes one)", name, len(token), MinTokenLength)
		}
		e := tokenEntry{name: name, hash: sha256.Sum256([]byte(token))}
		if first, dup := names[name]; dup {
			bad("name %q is already on line %d", name, first)
		}
		if first, dup := hashes[e.hash]; dup {
			bad("the token of %q is already on line %d", name, first)
		}
		names[name], hashes[e.hash] = n, n
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Errorf("%s: %w", path, err))
	}
	if len(problems) == 0 && len(entries) == 0 && !serving {
		problems = append(problems, fmt.Errorf("%s: no tokens (a line is \"<name> <token>\")", path))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return entries, nil
}

// Authenticate returns the name of token's caller. It hashes the token and
// compares the hash with every entry's in constant time, without stopping at
// a match, so the time taken says nothing about the tokens.
func (t *Tokens) Authenticate(token string) (string, bool) {
	hash := sha256.Sum256([]byte(token))
	name, found := "", 0
	for _, e := range t.file.get() {
		match := subtle.ConstantTimeCompare(hash[:], e.hash[:])
		if match == 1 {
			name = e.name
		}
		found |= match
	}
	return name, found == 1
}

// certificateCaller is the subject common name of the client certificate of
// the call's connection, if it has one.
func certificateCaller(ctx context.Context) (string, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.PeerCertificates) == 0 {
		return "", false
	}
	cn := info.State.PeerCertificates[0].Subject.CommonName
	return cn, cn != ""
}

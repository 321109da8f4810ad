// Package tenant says whose a call is, and makes every store kept between
// calls the caller's own: the transport records the authenticated caller
// in the call's context (WithCaller), and each store keys every entry by
// it (the summary cache and the state refs' Redis entries by the caller's
// Namespace, the state refs' memory by a map of callers, the schedule
// cache by the caller's name in its hashed keys), so that no caller can
// read or replace what another stored, whatever id or content it sends. A call with no caller (a server without
// authentication, a program calling the engine in process) is in the one
// shared namespace, which no authenticated caller is in.
package tenant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

type callerKey struct{}

// WithCaller records the authenticated caller of a call: the name of its
// bearer token, or the subject common name of its client certificate.
func WithCaller(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, callerKey{}, name)
}

// Caller returns the authenticated caller of a call (WithCaller); false
// when the call has none.
func Caller(ctx context.Context) (string, bool) {
	name, ok := ctx.Value(callerKey{}).(string)
	return name, ok
}

// NamespaceLen is the length of every namespace: fixed, so that a
// namespace followed by any key reads back as one namespace and one key.
const NamespaceLen = 32

// Namespace is the namespace of the call's caller (NamespaceOf); the shared
// one when the call has none.
func Namespace(ctx context.Context) string {
	name, _ := Caller(ctx)
	return NamespaceOf(name)
}

// NamespaceOf is the namespace of the caller named name ("" is the shared
// one): NamespaceLen hex digits of a hash of the name, length-prefixed and
// versioned, so that no name, however crafted, shares another's namespace,
// and names of any alphabet stay out of the backends' key syntax.
func NamespaceOf(name string) string {
	h := sha256.New()
	h.Write([]byte("ctxc-tenant/v1\x00"))
	h.Write([]byte(strconv.Itoa(len(name))))
	h.Write([]byte{':'})
	h.Write([]byte(name))
	return hex.EncodeToString(h.Sum(nil))[:NamespaceLen]
}

package service

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/contextcompiler/ctxc/internal/adapter"
)

// RequireBearer lets through only the requests whose header carries
// "Bearer <token>" for one of tokens, and refuses the others (refuse
// answers them) before anything reads their body; with nil tokens every
// request passes. The caller's name goes into the request's context
// (CallerFromContext).
func RequireBearer(tokens *Tokens, header string, refuse http.HandlerFunc, next http.Handler) http.Handler {
	if tokens == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get(header), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "bearer") || token == "" {
			refuse(w, r)
			return
		}
		name, ok := tokens.Authenticate(token)
		if !ok {
			refuse(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(adapter.WithCaller(r.Context(), name)))
	})
}

// RefuseUnauthenticated answers 401 with a Bearer challenge.
func RefuseUnauthenticated(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ctxc"`)
	http.Error(w, "unauthenticated", http.StatusUnauthorized)
}

// ProxyTokenHeader carries ctxc's token, bare, on the proxy's paths:
// Authorization (and x-api-key, x-goog-api-key) is the provider's key there.
const ProxyTokenHeader = "X-Ctxc-Token"

// proxyAuth checks ctxc's token on the proxy's paths as gatewayAuth does on
// the API's: before anything reads the body or takes one of the proxy's
// call slots, so that a client without a token costs its headers and no
// more; each refusal is counted and logged as the API's are, and answered
// by the proxy in its provider's shape.
func proxyAuth(p Proxy, tokens *Tokens, refused *refusals, proxies []netip.Prefix) http.Handler {
	if tokens == nil {
		return p
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := strings.TrimSpace(r.Header.Get(ProxyTokenHeader))
		name, ok := tokens.Authenticate(token)
		if token == "" || !ok {
			refused.refused(r.Context(), "http", ClientAddress(r, proxies), r.URL.Path)
			p.Unauthenticated(w, r)
			return
		}
		p.ServeHTTP(w, r.WithContext(adapter.WithCaller(r.Context(), name)))
	})
}

// healthzPath is the gateway's health endpoint (grpc-gateway's default).
const healthzPath = "/healthz"

// gatewayAuth checks the API's bearer token on the gateway before the body
// is read (the gRPC server checks it again), answering a refusal as the
// API's JSON error; health needs no token, as on gRPC.
func gatewayAuth(next http.Handler, tokens *Tokens, refused *refusals, proxies []netip.Prefix, mux *runtime.ServeMux, marshaler runtime.Marshaler) http.Handler {
	refuse := func(w http.ResponseWriter, r *http.Request) {
		refused.refused(r.Context(), "http", ClientAddress(r, proxies), r.URL.Path)
		w.Header().Set("WWW-Authenticate", `Bearer realm="ctxc"`)
		runtime.HTTPError(r.Context(), mux, marshaler, w, r, status.Error(codes.Unauthenticated, "unauthenticated"))
	}
	checked := RequireBearer(tokens, "Authorization", refuse, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == healthzPath {
			next.ServeHTTP(w, r)
			return
		}
		checked.ServeHTTP(w, r)
	})
}

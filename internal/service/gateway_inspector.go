package service

import (
	"net/http"
	"strings"
)

// withInspector serves the inspector page beside the API: its assets at
// /ui/, and at /ui/api/ the API itself (api, the gateway's whole handler),
// so the page's calls take the same path as any HTTP client's, through the
// same authentication and limits.
//
// A browser cannot put a bearer token on the page it navigates to, so with
// tokens the page is behind HTTP Basic authentication whose password is a
// token from the token file (the user name is not checked): the browser asks
// for it once and sends it with every request below /ui/, and the calls at
// /ui/api/ go on to the API with it as their bearer token, which the gRPC
// server checks as it checks every call's. With mTLS the TLS handshake has
// checked the browser's certificate before any of this runs.
func withInspector(api, page http.Handler, tokens *Tokens) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle("/ui/", http.StripPrefix("/ui", requirePageToken(page, tokens)))
	mux.Handle("/ui/api/", http.StripPrefix("/ui/api", bearerFromBasic(api)))
	return mux
}

// requirePageToken answers 401 with a Basic challenge unless the request
// carries a valid token, as a Basic password or a bearer token; without
// tokens it lets everything through.
func requirePageToken(next http.Handler, tokens *Tokens) http.Handler {
	if tokens == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := requestToken(r)
		if ok {
			_, ok = tokens.Authenticate(token)
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="ctxc inspector", charset="UTF-8"`)
			http.Error(w, "the ctxc inspector needs a token from the server's auth_token_file as the password", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requestToken is the token of a Basic (its password) or Bearer Authorization header.
func requestToken(r *http.Request) (string, bool) {
	if _, password, ok := r.BasicAuth(); ok {
		return password, password != ""
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// bearerFromBasic turns the Basic credentials a browser sends into the
// bearer token the API expects.
func bearerFromBasic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, password, ok := r.BasicAuth(); ok {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+password)
		}
		next.ServeHTTP(w, r)
	})
}

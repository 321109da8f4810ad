package inspector

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := http.StripPrefix("/ui", Handler())
	tests := []struct {
		method, path string
		wantCode     int
		wantType     string
		wantBody     string
	}{
		{http.MethodGet, "/ui/", http.StatusOK, "text/html; charset=utf-8", `<script defer src="inspector.js">`},
		{http.MethodGet, "/ui/inspector.js", http.StatusOK, "text/javascript; charset=utf-8", "u-legend"},
		{http.MethodGet, "/ui/inspector.css", http.StatusOK, "text/css; charset=utf-8", ".budget-bar"},
		{http.MethodGet, "/ui/examples/coding-agent.json", http.StatusOK, "application/json", `"coder-7"`},
		{http.MethodHead, "/ui/favicon.svg", http.StatusOK, "image/svg+xml", ""},
		{http.MethodGet, "/ui/missing.js", http.StatusNotFound, "", ""},
		{http.MethodPost, "/ui/", http.StatusMethodNotAllowed, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.wantCode {
				t.Fatalf("status %d, want %d", rec.Code, tt.wantCode)
			}
			if got := rec.Header().Get("Content-Security-Policy"); tt.wantCode != http.StatusMethodNotAllowed && got != ContentSecurityPolicy {
				t.Errorf("Content-Security-Policy %q, want %q", got, ContentSecurityPolicy)
			}
			if tt.wantCode != http.StatusOK {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type %q, want %q", got, tt.wantType)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body lacks %q", tt.wantBody)
			}
			for _, header := range []string{"X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
				if rec.Header().Get(header) == "" {
					t.Errorf("no %s header", header)
				}
			}
		})
	}
}

// The CSP allows no inline code and no other origin.
func TestContentSecurityPolicyIsStrict(t *testing.T) {
	for _, bad := range []string{"'unsafe-inline'", "'unsafe-eval'", "*", "http:", "https:"} {
		if strings.Contains(ContentSecurityPolicy, bad) {
			t.Errorf("the policy allows %s: %s", bad, ContentSecurityPolicy)
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("the policy lacks %s", want)
		}
	}
}

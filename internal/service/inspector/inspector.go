// Package inspector serves the context inspector: the web page at /ui/ that
// shows what a compile did (budget, dispositions, stages, the prompt-cache
// boundary, the rendered body) and plots `ctxc eval --json` output. Its
// assets are built from ui/ by `make ui` and embedded here, so the binary
// serves the page with no network and no files beside it; the page calls the
// HTTP/JSON API of the same server (docs/design.md, "The inspector").
package inspector

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy lets the page load only its own script, style sheet
// and examples, and call only its own server; no inline script or style
// sheet, no frames, no forms, no other origin.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the assets below the path it is mounted at (use
// http.StripPrefix): index.html for the directory itself. Every answer
// carries the CSP and headers that keep the page out of frames and MIME
// sniffing; the assets change with the binary, so browsers revalidate them.
func Handler() http.Handler {
	root, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

package service

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"
)

// Refusals for want of credentials are what scanning and guessing look
// like, so each is counted and logged, with the client's address and never
// the credential. A flood must not flood the log: after one line, the next
// comes at most refusalLogInterval later and says how many it stands for.

// RefusalObserver is told of every request refused for want of a valid
// token or client certificate, by port: "grpc", "http" or "metrics"
// (*metrics.Admission implements it).
type RefusalObserver interface {
	Unauthenticated(port string)
}

// refusalLogInterval is the least time between two refusal log lines.
const refusalLogInterval = time.Second

// refusals counts and logs unauthenticated requests.
type refusals struct {
	log      *slog.Logger
	observer RefusalObserver
	*throttle
}

func newRefusals(log *slog.Logger, observer RefusalObserver) *refusals {
	return &refusals{log: log, observer: observer, throttle: newThrottle()}
}

// refused records one refusal on port of a request from client (an
// address) to what (a method or path).
func (r *refusals) refused(ctx context.Context, port, client, what string) {
	if r.observer != nil {
		r.observer.Unauthenticated(port)
	}
	if suppressed, ok := r.allow(); ok {
		r.log.WarnContext(ctx, "unauthenticated request refused", "port", port, "client", client, "target", adapter.Clip(what, 128),
			"refused_unlogged_since_last", suppressed)
	}
}

// Refused returns refuse with each refusal on port counted and logged
// first (for an HTTP port of the caller's, such as /metrics).
func (t *Transport) Refused(port string, refuse http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t.refusals.refused(r.Context(), port, r.RemoteAddr, r.URL.Path)
		refuse(w, r)
	}
}

// throttle lets a repeated log line through at most once every
// refusalLogInterval, counting those it held back.
type throttle struct {
	now        func() time.Time
	mu         sync.Mutex
	logged     time.Time
	suppressed int
}

func newThrottle() *throttle { return &throttle{now: time.Now} }

// allow reports whether to log now, and how many were held back since the
// last line that was.
func (t *throttle) allow() (suppressed int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if !t.logged.IsZero() && now.Sub(t.logged) < refusalLogInterval {
		t.suppressed++
		return 0, false
	}
	suppressed, t.logged, t.suppressed = t.suppressed, now, 0
	return suppressed, true
}

package service

import (
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// reloadInterval is how often a file-backed value (certificates, the token
// file) looks at its files again. The check is a stat per file, made on use
// (a TLS handshake, an authenticated call), so an idle server does nothing.
const reloadInterval = time.Second

// fileStamp is what tells that a file changed: an atomic rename (how
// Kubernetes and cert-manager update mounted secrets) changes the inode, an
// in-place rewrite the size or modification time.
type fileStamp struct {
	size  int64
	mtime time.Time
	inode uint64
}

func stampFile(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.inode = st.Ino
	}
	return s, nil
}

// reloading holds a value built from files and builds it again when one of
// them changes. A reload that fails keeps the current value and logs why, so
// a half-written certificate never takes a serving server down.
type reloading[T any] struct {
	what  string // named in log lines: "tls certificate", "auth token file"
	paths []string
	load  func() (T, error)
	log   *slog.Logger
	now   func() time.Time

	value   atomic.Pointer[T]
	checked atomic.Int64 // Unix nanoseconds of the last look at the files
	mu      sync.Mutex   // one reload at a time
	stamps  []fileStamp
	// failed and warned say which failure was last logged and when, so that
	// one that lasts is logged again only every failureLogInterval.
	failed string
	warned time.Time
}

// failureLogInterval is how often a lasting reload failure is logged again.
const failureLogInterval = time.Minute

// warnFailure logs a failed look or reload, once per distinct failure and
// then at most every failureLogInterval.
func (r *reloading[T]) warnFailure(now time.Time, msg, failure string) {
	if failure == r.failed && now.Sub(r.warned) < failureLogInterval {
		return
	}
	r.failed, r.warned = failure, now
	r.log.Warn(msg, "error", failure)
}

// newReloading loads the value once; an error here stops start-up.
func newReloading[T any](what string, paths []string, load func() (T, error), log *slog.Logger) (*reloading[T], error) {
	r := &reloading[T]{what: what, paths: paths, load: load, log: log, now: time.Now}
	stamps, err := r.stampAll()
	if err != nil {
		return nil, err
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	r.value.Store(&v)
	r.stamps = stamps
	r.checked.Store(r.now().UnixNano())
	return r, nil
}

func (r *reloading[T]) stampAll() ([]fileStamp, error) {
	stamps := make([]fileStamp, len(r.paths))
	for i, p := range r.paths {
		s, err := stampFile(p)
		if err != nil {
			return nil, err
		}
		stamps[i] = s
	}
	return stamps, nil
}

// get returns the current value, reloading it first when the files changed
// since the last look (at most once per reloadInterval).
func (r *reloading[T]) get() T {
	now := r.now()
	if now.UnixNano()-r.checked.Load() >= int64(reloadInterval) && r.mu.TryLock() {
		r.checked.Store(now.UnixNano())
		r.reloadIfChanged(now)
		r.mu.Unlock()
	}
	return *r.value.Load()
}

func (r *reloading[T]) reloadIfChanged(now time.Time) {
	stamps, err := r.stampAll()
	if err != nil {
		r.warnFailure(now, "cannot read "+r.what+"; keeping the loaded one", err.Error())
		return
	}
	changed := false
	for i := range stamps {
		if stamps[i] != r.stamps[i] {
			changed = true
		}
	}
	if !changed {
		return
	}
	v, err := r.load()
	if err != nil {
		// Not stamped: a half-written file is tried again on the next look.
		r.warnFailure(now, "reloading "+r.what+" failed; keeping the loaded one", err.Error())
		return
	}
	r.value.Store(&v)
	r.stamps, r.failed = stamps, ""
	r.log.Info("reloaded "+r.what, "files", r.paths)
}

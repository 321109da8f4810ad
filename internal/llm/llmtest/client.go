package llmtest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/summarycache"
)

// Client returns the production client pointed at s, with one retry, a
// 2-second timeout and millisecond backoff so failure cases run fast; change,
// when not nil, adjusts the config first.
func (s *Server) Client(t testing.TB, model string, change func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.DefaultConfig()
	cfg.Model, cfg.BaseURL, cfg.Timeout, cfg.MaxRetries = model, s.URL, 2*time.Second, 1
	if change != nil {
		change(&cfg)
	}
	client, err := llm.New(cfg, llm.Options{BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// MemoryCache returns an in-memory summary cache with the default settings.
func MemoryCache(t testing.TB) *summarycache.Cache {
	t.Helper()
	cache, err := summarycache.New(summarycache.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cache
}

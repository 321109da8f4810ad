package pipelinetest

import (
	"log/slog"
	"testing"

	"github.com/contextcompiler/ctxc/internal/docset"
	"github.com/contextcompiler/ctxc/internal/eval"
	"github.com/contextcompiler/ctxc/server"
)

// testService is the in-process service `ctxc eval` measures by default:
// an engine of the default configuration, the built-in profiles.
func testService(t *testing.T) eval.Service {
	t.Helper()
	cfg := server.NewConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	eng, err := server.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	svc, err := eng.Service()
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// docs reads the documentation as one text (internal/docset): README.md,
// then the guides under docs/, headings as if they were the README's
// sections.
func docs() ([]byte, error) {
	d, err := docset.Read("../..")
	if err != nil {
		return nil, err
	}
	return []byte(d.Text), nil
}

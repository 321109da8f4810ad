package llmsummary

import (
	"fmt"

	"github.com/contextcompiler/ctxc/internal/accounting"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/compaction"
)

// Type is the policy type.
const Type = "llm_summarize"

// Deps are the policy's collaborators, built once at start.
type Deps struct {
	// Client is the summarizer model; nil means none is configured, so every
	// summary is deterministic (degraded, or UNAVAILABLE when strict).
	Client llm.Completer
	// Cache holds summaries by what they cover; nil caches nothing.
	Cache *summarycache.Cache
	// Prices prices the model's usage; nil reports cost 0.
	Prices accounting.PriceLookup
	// Outputs remembers what was read of tool outputs (shared with the
	// other policies that read them); nil reads afresh each request.
	Outputs *diagnose.Cache
}

type factory struct{ deps Deps }

// NewFactory returns the factory of "llm_summarize".
func NewFactory(deps Deps) policies.Factory { return factory{deps: deps} }

func (factory) Type() string          { return Type }
func (factory) Stage() policies.Stage { return policies.StageCompact }

func (factory) CreateDefaultConfig() policies.Config {
	return &Config{
		SummarizeConfig: compaction.DefaultSummarizeConfig(),
		ToolOutputChars: 1500,
	}
}

func (f factory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *llmsummary.Config", Type, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", Type, err)
	}
	return policy{cfg: *c, deps: f.deps}, nil
}

package plan

import (
	"fmt"

	"github.com/contextcompiler/ctxc/internal/accounting"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/policies"
)

// Type is the policy type.
const Type = "llm_plan"

// Deps are the policy's collaborators, built once at start.
type Deps struct {
	// Planner plans; nil means none is configured: the deterministic plan is
	// used (degraded when planning was called for).
	Planner llm.Completer
	// Summarizer writes the summaries a plan asks for; nil uses Planner.
	Summarizer llm.Completer
	// Cache holds artifact summaries by content and focus; nil caches nothing.
	Cache *summarycache.Cache
	// Prices prices the models' usage; nil reports cost 0.
	Prices accounting.PriceLookup
	// Outputs remembers what was read of tool outputs (the lines an exclude
	// or an extract keeps); nil reads afresh.
	Outputs *diagnose.Cache
}

type factory struct{ deps Deps }

// NewFactory returns the factory of "llm_plan".
func NewFactory(deps Deps) policies.Factory { return factory{deps: deps} }

func (factory) Type() string          { return Type }
func (factory) Stage() policies.Stage { return policies.StagePlan }

func (factory) CreateDefaultConfig() policies.Config {
	return &Config{
		PreviewChars: 600, MaxPromptChars: 48000, ChunkChars: 800, MaxSummaryTokens: 500, MaxExtractTokens: 1000,
		Thresholds: DefaultThresholds(),
	}
}

// DefaultThresholds are the thresholds a profile that sets none uses.
func DefaultThresholds() Thresholds {
	return Thresholds{MinTotalChars: 5000, LargeArtifactChars: 10000, FitBufferRatio: 0.30, NearLimitRatio: 0.90, ExpensiveInputPerMTok: 10}
}

func (f factory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *plan.Config", Type, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", Type, err)
	}
	deps := f.deps
	if deps.Summarizer == nil {
		deps.Summarizer = deps.Planner
	}
	deps.Outputs = diagnose.CacheOr(deps.Outputs)
	return policy{cfg: *c, deps: deps}, nil
}

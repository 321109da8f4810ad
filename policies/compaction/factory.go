package compaction

import (
	"fmt"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/diagnose"
	"github.com/contextcompiler/ctxc/policies/isolation"
)

// Policy types.
const (
	TypeClamp             = "clamp"
	TypeDedupe            = "dedupe"
	TypeMaskObservations  = "mask_observations"
	TypeDropLowImportance = "drop_low_importance"
	TypeSummarize         = "summarize"
	TypeTruncate          = "truncate"
)

type factory struct {
	typ      string
	defaults func() policies.Config
	create   func(cfg policies.Config) (policies.Policy, bool)
}

func (f factory) Type() string                         { return f.typ }
func (f factory) Stage() policies.Stage                { return policies.StageCompact }
func (f factory) CreateDefaultConfig() policies.Config { return f.defaults() }

func (f factory) Create(cfg policies.Config) (policies.Policy, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%s: no config", f.typ)
	}
	p, ok := f.create(cfg)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want %T", f.typ, cfg, f.defaults())
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.typ, err)
	}
	return p, nil
}

// NewClampFactory returns the factory of "clamp": head/tail truncation of
// oversized parts.
func NewClampFactory() policies.Factory {
	return factory{
		typ:      TypeClamp,
		defaults: func() policies.Config { return &ClampConfig{MaxPartTokens: 4000, HeadRatio: 0.6} },
		create: func(cfg policies.Config) (policies.Policy, bool) {
			c, ok := cfg.(*ClampConfig)
			if !ok {
				return nil, false
			}
			return clamp{cfg: *c}, true
		},
	}
}

// NewDedupeFactory returns the factory of "dedupe": superseded reads and
// repeated tool results become pointers to the later one.
func NewDedupeFactory() policies.Factory {
	return factory{
		typ: TypeDedupe,
		defaults: func() policies.Config {
			return &DedupeConfig{ResourceKeys: []string{"path", "file_path", "file", "url", "uri"}, MinSavingRatio: 0.05}
		},
		create: func(cfg policies.Config) (policies.Policy, bool) {
			c, ok := cfg.(*DedupeConfig)
			if !ok {
				return nil, false
			}
			cp := *c
			cp.ResourceKeys = append([]string(nil), c.ResourceKeys...)
			return dedupe{cfg: cp}, true
		},
	}
}

// NewMaskObservationsFactory returns the factory of "mask_observations": the
// isolation stage's observation masking, run towards the compaction target.
func NewMaskObservationsFactory(deps Deps) policies.Factory {
	return factory{
		typ: TypeMaskObservations,
		defaults: func() policies.Config {
			// Outputs of the running turn are protected as the recency window;
			// older ones are masked as the target needs, with a short preview.
			cfg := isolation.DefaultMaskingConfig()
			cfg.PreviewChars, cfg.ProtectRecentTokens = 120, 0
			return &MaskObservationsConfig{MaskingConfig: *cfg}
		},
		create: func(cfg policies.Config) (policies.Policy, bool) {
			c, ok := cfg.(*MaskObservationsConfig)
			if !ok {
				return nil, false
			}
			cp := c.MaskingConfig
			cp.ExemptTools = append([]string(nil), c.ExemptTools...)
			return maskObservations{cfg: cp, outputs: diagnose.CacheOr(deps.Outputs)}, true
		},
	}
}

// NewDropLowImportanceFactory returns the factory of "drop_low_importance":
// lowest importance first, whole units, below a threshold.
func NewDropLowImportanceFactory() policies.Factory {
	return factory{
		typ: TypeDropLowImportance,
		defaults: func() policies.Config {
			return &DropLowImportanceConfig{MinImportanceThreshold: DefaultMinImportanceThreshold, KeepRecentMessages: DefaultKeepRecentMessages}
		},
		create: func(cfg policies.Config) (policies.Policy, bool) {
			c, ok := cfg.(*DropLowImportanceConfig)
			if !ok {
				return nil, false
			}
			return dropLowImportance{cfg: *c}, true
		},
	}
}

// Deps are the shared parts compaction policies read with.
type Deps struct {
	// Outputs remembers what was read of tool outputs, for every policy that
	// reads them (masks, summaries, boundary records); nil gives each policy
	// its own.
	Outputs *diagnose.Cache
}

// NewSummarizeFactory returns the factory of "summarize" with the
// deterministic summarizer.
func NewSummarizeFactory(deps Deps) policies.Factory {
	return NewSummarizeFactoryWith(nil, deps)
}

// NewSummarizeFactoryWith returns the factory of "summarize" using s (an LLM
// summarizer, say); nil uses DeterministicSummarizer.
func NewSummarizeFactoryWith(s Summarizer, deps Deps) policies.Factory {
	return factory{
		typ: TypeSummarize,
		defaults: func() policies.Config {
			c := DefaultSummarizeConfig()
			return &c
		},
		create: func(cfg policies.Config) (policies.Policy, bool) {
			c, ok := cfg.(*SummarizeConfig)
			if !ok {
				return nil, false
			}
			det := DeterministicSummarizer{Memo: NewMemo(diagnose.CacheOr(deps.Outputs))}
			sum := s
			if sum == nil {
				sum = det
			}
			return summarize{cfg: *c, summarizer: sum, det: det}, true
		},
	}
}

// NewTruncateFactory returns the factory of "truncate": the contiguous-recency
// fallback.
func NewTruncateFactory() policies.Factory {
	return factory{
		typ:      TypeTruncate,
		defaults: func() policies.Config { return &TruncateConfig{Mode: TruncateFit, MaxMessages: 50, TargetRatio: 0.75} },
		create: func(cfg policies.Config) (policies.Policy, bool) {
			c, ok := cfg.(*TruncateConfig)
			if !ok {
				return nil, false
			}
			return truncator{cfg: *c}, true
		},
	}
}

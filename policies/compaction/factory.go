package compaction

import (
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/isolate"
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

// NewClampFactory returns the factory of "clamp": head/tail truncation of
// oversized parts.
func NewClampFactory() policies.Factory {
	return policies.TypedFactory[ClampConfig, *ClampConfig]{
		Name: TypeClamp, In: policies.StageCompact,
		Defaults: func() *ClampConfig { return &ClampConfig{MaxPartTokens: 4000, HeadRatio: 0.6} },
		New: func(c *ClampConfig) (policies.Policy, error) {
			return clamp{cfg: *c}, nil
		},
	}
}

// NewDedupeFactory returns the factory of "dedupe": superseded reads and
// repeated tool results become pointers to the later one.
func NewDedupeFactory() policies.Factory {
	return policies.TypedFactory[DedupeConfig, *DedupeConfig]{
		Name: TypeDedupe, In: policies.StageCompact,
		Defaults: func() *DedupeConfig {
			return &DedupeConfig{ResourceKeys: []string{"path", "file_path", "file", "url", "uri"}, MinSavingRatio: 0.05}
		},
		New: func(c *DedupeConfig) (policies.Policy, error) {
			cp := *c
			cp.ResourceKeys = append([]string(nil), c.ResourceKeys...)
			return dedupe{cfg: cp}, nil
		},
	}
}

// NewMaskObservationsFactory returns the factory of "mask_observations": the
// isolation stage's observation masking, run towards the compaction target.
func NewMaskObservationsFactory(deps Deps) policies.Factory {
	return policies.TypedFactory[MaskObservationsConfig, *MaskObservationsConfig]{
		Name: TypeMaskObservations, In: policies.StageCompact,
		Defaults: func() *MaskObservationsConfig {
			// Outputs of the running turn are protected as the recency window;
			// older ones are masked as the target needs, with a short preview.
			cfg := isolate.DefaultMaskingConfig()
			cfg.PreviewChars, cfg.ProtectRecentTokens = 120, 0
			return &MaskObservationsConfig{MaskingConfig: *cfg}
		},
		New: func(c *MaskObservationsConfig) (policies.Policy, error) {
			cp := c.MaskingConfig
			cp.ExemptTools = append([]string(nil), c.ExemptTools...)
			return maskObservations{cfg: cp, outputs: diagnose.CacheOr(deps.Outputs)}, nil
		},
	}
}

// NewDropLowImportanceFactory returns the factory of "drop_low_importance":
// lowest importance first, whole units, below a threshold.
func NewDropLowImportanceFactory() policies.Factory {
	return policies.TypedFactory[DropLowImportanceConfig, *DropLowImportanceConfig]{
		Name: TypeDropLowImportance, In: policies.StageCompact,
		Defaults: func() *DropLowImportanceConfig {
			return &DropLowImportanceConfig{MinImportanceThreshold: DefaultMinImportanceThreshold, KeepRecentMessages: DefaultKeepRecentMessages}
		},
		New: func(c *DropLowImportanceConfig) (policies.Policy, error) {
			return dropLowImportance{cfg: *c}, nil
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
	return policies.TypedFactory[SummarizeConfig, *SummarizeConfig]{
		Name: TypeSummarize, In: policies.StageCompact,
		Defaults: func() *SummarizeConfig {
			c := DefaultSummarizeConfig()
			return &c
		},
		New: func(c *SummarizeConfig) (policies.Policy, error) {
			det := DeterministicSummarizer{Memo: NewMemo(diagnose.CacheOr(deps.Outputs))}
			sum := s
			if sum == nil {
				sum = det
			}
			return summarize{cfg: *c, summarizer: sum, det: det}, nil
		},
	}
}

// NewTruncateFactory returns the factory of "truncate": the contiguous-recency
// fallback.
func NewTruncateFactory(deps Deps) policies.Factory {
	return policies.TypedFactory[TruncateConfig, *TruncateConfig]{
		Name: TypeTruncate, In: policies.StageCompact,
		Defaults: func() *TruncateConfig { return &TruncateConfig{Mode: TruncateFit, MaxMessages: 50, TargetRatio: 0.75} },
		New: func(c *TruncateConfig) (policies.Policy, error) {
			outputs := diagnose.CacheOr(deps.Outputs)
			return truncator{cfg: *c, outputs: outputs, det: DeterministicSummarizer{Memo: NewMemo(outputs)}}, nil
		},
	}
}

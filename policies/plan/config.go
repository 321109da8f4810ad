package plan

import (
	"errors"

	"github.com/contextcompiler/ctxc/internal/bounds"
)

// Thresholds tune ShouldUseLLMPlanning's decision table.
type Thresholds struct {
	// MinTotalChars: artifacts smaller than this in all are never planned. Default 5000.
	MinTotalChars int `yaml:"min_total_chars" json:"min_total_chars"`
	// LargeArtifactChars: an artifact this large is worth planning. Default 10000.
	LargeArtifactChars int `yaml:"large_artifact_chars" json:"large_artifact_chars"`
	// FitBufferRatio: artifacts fit when their tokens times 1+ratio fit the
	// budget. Default 0.30.
	FitBufferRatio float64 `yaml:"fit_buffer_ratio" json:"fit_buffer_ratio"`
	// NearLimitRatio: artifacts using this share of the budget or more are
	// near the limit. Default 0.90.
	NearLimitRatio float64 `yaml:"near_limit_ratio" json:"near_limit_ratio"`
	// ExpensiveInputPerMTok: a primary model whose input costs this many US
	// dollars per million tokens or more is expensive (0.00001 per token).
	// Default 10.
	ExpensiveInputPerMTok float64 `yaml:"expensive_input_per_mtok" json:"expensive_input_per_mtok"`
}

// Config is the "llm_plan" policy's settings.
type Config struct {
	// Strict makes a planner failure fail the request with UNAVAILABLE instead
	// of using the deterministic plan. Default false.
	Strict bool `yaml:"strict" json:"strict"`
	// PreviewChars is how much of each artifact the planner sees. Default 600.
	PreviewChars int `yaml:"preview_chars" json:"preview_chars"`
	// MaxPromptChars bounds the planner's prompt so that it fits the planner
	// model's window however many artifacts there are: previews shrink (to
	// 100 characters at the least), then the smallest artifacts are left out
	// of the plan and get the deterministic one. Default 48000 (about 12K
	// tokens).
	MaxPromptChars int `yaml:"max_prompt_chars" json:"max_prompt_chars"`
	// ChunkChars is the size of the chunks extract ranks. Default 800.
	ChunkChars int `yaml:"chunk_chars" json:"chunk_chars"`
	// MaxSummaryTokens caps one artifact's summary. Default 500.
	MaxSummaryTokens int `yaml:"max_summary_tokens" json:"max_summary_tokens"`
	// MaxExtractTokens caps one artifact's extract. Default 1000.
	MaxExtractTokens int `yaml:"max_extract_tokens" json:"max_extract_tokens"`
	// Thresholds decide when the planner is called.
	Thresholds Thresholds `yaml:"thresholds" json:"thresholds"`
}

// Validate reports every problem of the config.
func (c *Config) Validate() error {
	t := &c.Thresholds
	return errors.Join(
		bounds.AtLeast("preview_chars", c.PreviewChars, 50),
		bounds.AtLeast("max_prompt_chars", c.MaxPromptChars, 4000),
		bounds.AtLeast("chunk_chars", c.ChunkChars, 100),
		bounds.AtLeast("max_summary_tokens", c.MaxSummaryTokens, 16),
		bounds.AtLeast("max_extract_tokens", c.MaxExtractTokens, 16),
		bounds.NotNegative("thresholds.min_total_chars", t.MinTotalChars),
		bounds.AtLeast("thresholds.large_artifact_chars", t.LargeArtifactChars, 1),
		bounds.Closed("thresholds.fit_buffer_ratio", t.FitBufferRatio, 0, 10),
		bounds.LeftOpen("thresholds.near_limit_ratio", t.NearLimitRatio, 0, 1),
		bounds.NotNegative("thresholds.expensive_input_per_mtok", t.ExpensiveInputPerMTok),
	)
}

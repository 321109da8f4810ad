package compaction

import (
	"errors"
	"fmt"

	"github.com/contextcompiler/ctxc/internal/bounds"
	"github.com/contextcompiler/ctxc/policies/isolate"
)

// ClampConfig is the "clamp" policy's settings.
type ClampConfig struct {
	// MaxPartTokens is the largest a text part or tool result content may be;
	// larger ones keep a head and a tail of this many tokens in all, with a
	// marker in the middle. Tool call arguments are never cut (cut JSON is not
	// JSON), nor reasoning (its signature covers it). Default 4000.
	MaxPartTokens int `yaml:"max_part_tokens" json:"max_part_tokens"`
	// HeadRatio is the share of MaxPartTokens kept at the head; the rest is kept
	// at the tail. In [0, 1]. Default 0.6.
	HeadRatio float64 `yaml:"head_ratio" json:"head_ratio"`
}

// Validate reports every problem of the config.
func (c *ClampConfig) Validate() error {
	return errors.Join(
		bounds.AtLeast("max_part_tokens", c.MaxPartTokens, 1),
		bounds.Closed("head_ratio", c.HeadRatio, 0, 1),
	)
}

// DedupeConfig is the "dedupe" policy's settings.
type DedupeConfig struct {
	// ResourceKeys are the argument names that identify the resource a call
	// reads: two calls of the same tool with the same value of the first of
	// these keys present read the same resource. Default [path, file_path, file,
	// url, uri].
	ResourceKeys []string `yaml:"resource_keys" json:"resource_keys"`
	// MinSavingRatio is the least share of the used tokens deduplication must
	// save before it changes anything, so a cache prefix is not broken for a
	// trivial gain. In [0, 1]. Default 0.05.
	MinSavingRatio float64 `yaml:"min_saving_ratio" json:"min_saving_ratio"`
}

// Validate reports every problem of the config.
func (c *DedupeConfig) Validate() error {
	var errs []error
	for i, k := range c.ResourceKeys {
		if k == "" {
			errs = append(errs, fmt.Errorf("resource_keys[%d]: empty key", i))
		}
	}
	return errors.Join(append(errs, bounds.Closed("min_saving_ratio", c.MinSavingRatio, 0, 1))...)
}

// MaskObservationsConfig is the "mask_observations" policy's settings: those of
// the isolation stage's observation masking (preview_chars,
// protect_recent_tokens, min_prunable_tokens, exempt_tools), applied towards the
// compaction target.
type MaskObservationsConfig struct {
	isolate.MaskingConfig `yaml:",inline"`
}

// Defaults of drop_low_importance: remove what scores under 30 first and
// always keep the newest 10 messages, the defaults of an SDK-managed context
// window (tool calls and decisions outscore chatter).
const (
	DefaultMinImportanceThreshold = 30
	DefaultKeepRecentMessages     = 10
)

// DropLowImportanceConfig is the "drop_low_importance" policy's settings.
//
// A message's importance is its explicit Importance (1..100) when
// set, otherwise its score in this table:
//
//	summary (Kind summary)                               90
//	tool result that failed (any result IsError)          80
//	user message (regular)                               70
//	decision: assistant text answer closing its turn     65
//	assistant message calling tools                      60
//	event (Kind event)                                   50
//	plain assistant text (not closing its turn)          30
//	repair or placeholder message                        30
//	successful tool result                               20
//	assistant message with only reasoning                10
//
// A tool unit (a call with its results) scores the maximum of its messages
// and is dropped whole; so with the default threshold of 30 tool rounds (60)
// and decisions (65) stay with user messages, and what goes first is
// reasoning-only output and any message given an explicit importance under
// 30. Messages the profile protects, and the newest KeepRecentMessages,
// are never dropped.
type DropLowImportanceConfig struct {
	// MinImportanceThreshold: only units scoring below it are dropped, lowest
	// score first, oldest first among equals, until the target is met. In
	// [1, 101]. Default 30.
	MinImportanceThreshold int `yaml:"min_importance_threshold" json:"min_importance_threshold"`
	// KeepRecentMessages: the newest this many messages of the context are
	// never dropped (a tool unit reaching into them is kept whole), beside
	// the profile's recent_turns. Default 10; 0 leaves only recent_turns.
	KeepRecentMessages int `yaml:"keep_recent_messages" json:"keep_recent_messages"`
}

// Validate reports every problem of the config.
func (c *DropLowImportanceConfig) Validate() error {
	errs := []error{bounds.Closed("min_importance_threshold", c.MinImportanceThreshold, 1, 101)}
	if c.KeepRecentMessages < 0 {
		errs = append(errs, fmt.Errorf("keep_recent_messages: %d must not be negative", c.KeepRecentMessages))
	}
	return errors.Join(errs...)
}

// SummarizeConfig is the "summarize" policy's settings. A summary's size
// follows from the compaction target, so a 200K window gets a bigger one than
// an 8K window; a fixed cap is optional.
type SummarizeConfig struct {
	// MaxSummaryRatio is the share of the compaction target that all summaries
	// in the context may use together: they only take what their facts need,
	// and a fact kept is worth more than an old message kept verbatim. Above
	// 1 a long session's facts may take more than the target (compaction then
	// runs at each compaction point, stacking a summary each time), never more
	// than four fifths of the window, nor, in the view a call compiles, more
	// than the window leaves beside the preamble and the protected newest
	// turn. In (0, 2]. Default 1.3.
	MaxSummaryRatio float64 `yaml:"max_summary_ratio" json:"max_summary_ratio"`
	// MaxSummaryTokens caps that budget; 0 sets no cap. Default 0.
	MaxSummaryTokens int `yaml:"max_summary_tokens" json:"max_summary_tokens"`
	// MinSummaryTokens is the least budget a summary gets, however small the
	// window. Default 256.
	MinSummaryTokens int `yaml:"min_summary_tokens" json:"min_summary_tokens"`
	// MergeFillRatio: when the summaries outgrow their budget and must all be
	// merged, the merged one uses at most this share of it; later compactions
	// then stack new summaries after it, and merge only the newest of those,
	// instead of rewriting (and uncaching) it. In (0, 1]. Default 0.7.
	MergeFillRatio float64 `yaml:"merge_fill_ratio" json:"merge_fill_ratio"`
	// MinSpanMessages is the fewest messages worth one summary. Default 2.
	MinSpanMessages int `yaml:"min_span_messages" json:"min_span_messages"`
}

// DefaultSummarizeConfig returns the defaults of "summarize", which
// llm_summarize shares.
func DefaultSummarizeConfig() SummarizeConfig {
	return SummarizeConfig{MaxSummaryRatio: 1.3, MinSummaryTokens: 256, MergeFillRatio: 0.7, MinSpanMessages: 2}
}

// Validate reports every problem of the config.
func (c *SummarizeConfig) Validate() error {
	return errors.Join(
		bounds.LeftOpen("max_summary_ratio", c.MaxSummaryRatio, 0, 2),
		bounds.NotNegative("max_summary_tokens", c.MaxSummaryTokens),
		bounds.AtLeast("min_summary_tokens", c.MinSummaryTokens, 1),
		bounds.LeftOpen("merge_fill_ratio", c.MergeFillRatio, 0, 1),
		bounds.AtLeast("min_span_messages", c.MinSpanMessages, 1),
	)
}

// Truncate modes.
const (
	// TruncateFit truncates down to the compaction target (the hard limit when
	// compacting only to fit the window).
	TruncateFit = "fit"
	// TruncateMessageLimit keeps the last max_messages messages (like a
	// MessageLimitCompactor).
	TruncateMessageLimit = "message_limit"
	// TruncateTokenLimit truncates down to target_tokens, or target_ratio of the
	// compaction target (TokenLimitCompactor).
	TruncateTokenLimit = "token_limit"
)

// TruncateConfig is the "truncate" policy's settings.
type TruncateConfig struct {
	// Mode is fit, message_limit or token_limit. Default fit.
	Mode string `yaml:"mode" json:"mode"`
	// MaxMessages is message_limit's count of messages kept, protected ones
	// included (protected messages are kept even beyond it). Default 50.
	MaxMessages int `yaml:"max_messages" json:"max_messages"`
	// TargetTokens is token_limit's target of used tokens; 0 uses TargetRatio.
	TargetTokens int `yaml:"target_tokens" json:"target_tokens"`
	// TargetRatio is token_limit's share of the compaction target aimed at when
	// TargetTokens is 0. In (0, 1]. Default 0.75.
	TargetRatio float64 `yaml:"target_ratio" json:"target_ratio"`
}

// Validate reports every problem of the config.
func (c *TruncateConfig) Validate() error {
	var errs []error
	switch c.Mode {
	case TruncateFit, TruncateMessageLimit, TruncateTokenLimit:
	default:
		errs = append(errs, fmt.Errorf("mode: %q must be %q, %q or %q", c.Mode, TruncateFit, TruncateMessageLimit, TruncateTokenLimit))
	}
	return errors.Join(append(errs,
		bounds.AtLeast("max_messages", c.MaxMessages, 1),
		bounds.NotNegative("target_tokens", c.TargetTokens),
		bounds.LeftOpen("target_ratio", c.TargetRatio, 0, 1),
	)...)
}

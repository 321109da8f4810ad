package isolate

import (
	"errors"
	"fmt"

	"github.com/contextcompiler/ctxc/internal/bounds"
)

// TransparentConfig is the transparent policy's settings; it has none.
type TransparentConfig struct{}

// Validate reports problems of the config; there are none.
func (c *TransparentConfig) Validate() error { return nil }

// BoundaryConfig is the boundary policy's settings.
type BoundaryConfig struct {
	// MaxRecordCalls is the most calls the trace record lists one by one; the
	// rest are counted ("and 12 more calls"). Default 50.
	MaxRecordCalls int `yaml:"max_record_calls" json:"max_record_calls"`
}

// Validate reports every problem of the config.
func (c *BoundaryConfig) Validate() error {
	return bounds.AtLeast("max_record_calls", c.MaxRecordCalls, 1)
}

// MaskingConfig is the observation_masking policy's settings.
type MaskingConfig struct {
	// PreviewChars is how many characters (runes) of a masked output's head and
	// of its tail the placeholder shows. Default 200; 0 shows none.
	PreviewChars int `yaml:"preview_chars" json:"preview_chars"`
	// ProtectRecentTokens is the size of the newest tool outputs never masked:
	// walking results newest to oldest, outputs are protected while their running
	// total stays within this many tokens. Default 8000.
	ProtectRecentTokens int `yaml:"protect_recent_tokens" json:"protect_recent_tokens"`
	// MinPrunableTokens is the least output size masking must save before it
	// masks anything, so a cache prefix is not broken for a trivial gain.
	// Default 2000.
	MinPrunableTokens int `yaml:"min_prunable_tokens" json:"min_prunable_tokens"`
	// ExemptTools names tools whose outputs are never masked (Anthropic's
	// context editing calls it exclude_tools).
	ExemptTools []string `yaml:"exempt_tools" json:"exempt_tools"`
	// KeepToolUses is how many of the newest tool outputs are never masked,
	// whatever their size (Anthropic's keep). Default 0: only
	// ProtectRecentTokens protects recent outputs.
	KeepToolUses int `yaml:"keep_tool_uses" json:"keep_tool_uses"`
	// ClearAtLeastTokens: when masking towards a target masks anything, it
	// goes on past the target until at least this many tokens are cleared, so
	// that breaking a cached prefix is worth it (Anthropic's clear_at_least).
	// Default 0.
	ClearAtLeastTokens int `yaml:"clear_at_least_tokens" json:"clear_at_least_tokens"`
}

// DefaultMaskingConfig returns the defaults of observation_masking.
func DefaultMaskingConfig() *MaskingConfig {
	return &MaskingConfig{PreviewChars: 200, ProtectRecentTokens: 8000, MinPrunableTokens: 2000}
}

// Validate reports every problem of the config.
func (c *MaskingConfig) Validate() error {
	errs := []error{
		bounds.NotNegative("preview_chars", c.PreviewChars),
		bounds.NotNegative("protect_recent_tokens", c.ProtectRecentTokens),
		bounds.NotNegative("min_prunable_tokens", c.MinPrunableTokens),
		bounds.NotNegative("keep_tool_uses", c.KeepToolUses),
		bounds.NotNegative("clear_at_least_tokens", c.ClearAtLeastTokens),
	}
	for i, t := range c.ExemptTools {
		if t == "" {
			errs = append(errs, fmt.Errorf("exempt_tools[%d]: empty tool name", i))
		}
	}
	return errors.Join(errs...)
}

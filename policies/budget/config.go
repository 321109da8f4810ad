package budget

import (
	"errors"
	"fmt"
)

// Defaults.
const (
	DefaultSoftThresholdRatio     = 0.8
	DefaultMaxReservedOutputRatio = 0.25
	DefaultMinHeadroomTokens      = 0
)

// Config is the token_budget policy's settings.
type Config struct {
	// SoftThresholdRatio is the share of the usable window (window minus
	// reserved output) at or above which the context should be compacted. A
	// request's soft_threshold_ratio option overrides it. Default 0.8.
	SoftThresholdRatio float64 `yaml:"soft_threshold_ratio" json:"soft_threshold_ratio"`
	// MaxReservedOutputRatio caps the output reservation at this share of the
	// window, so a model whose max output is most of its window still leaves
	// room for context. Default 0.25.
	MaxReservedOutputRatio float64 `yaml:"max_reserved_output_ratio" json:"max_reserved_output_ratio"`
	// MinHeadroomTokens asks for compaction when fewer tokens than this
	// remain (window minus used minus reserved output), however far below
	// the soft threshold the context is: the budget's should_compact says so
	// and the threshold trigger fires. Default 0 (only the soft threshold
	// decides).
	MinHeadroomTokens int `yaml:"min_headroom_tokens" json:"min_headroom_tokens"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		SoftThresholdRatio:     DefaultSoftThresholdRatio,
		MaxReservedOutputRatio: DefaultMaxReservedOutputRatio,
		MinHeadroomTokens:      DefaultMinHeadroomTokens,
	}
}

// Validate reports every problem of the config.
func (c *Config) Validate() error {
	var errs []error
	if !(c.SoftThresholdRatio > 0 && c.SoftThresholdRatio <= 1) {
		errs = append(errs, fmt.Errorf("soft_threshold_ratio must be in (0, 1], got %v", c.SoftThresholdRatio))
	}
	if !(c.MaxReservedOutputRatio >= 0 && c.MaxReservedOutputRatio < 1) {
		errs = append(errs, fmt.Errorf("max_reserved_output_ratio must be in [0, 1), got %v", c.MaxReservedOutputRatio))
	}
	if c.MinHeadroomTokens < 0 {
		errs = append(errs, fmt.Errorf("min_headroom_tokens must not be negative, got %d", c.MinHeadroomTokens))
	}
	return errors.Join(errs...)
}

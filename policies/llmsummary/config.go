package llmsummary

import (
	"errors"

	"github.com/contextcompiler/ctxc/internal/bounds"
	"github.com/contextcompiler/ctxc/policies/compaction"
)

// Config is the "llm_summarize" policy's settings: those of "summarize"
// (max_summary_ratio, max_summary_tokens, min_summary_tokens,
// merge_fill_ratio, min_span_messages) and the model's.
type Config struct {
	compaction.SummarizeConfig `yaml:",inline"`
	// Strict makes a model failure fail the request with UNAVAILABLE instead of
	// falling back to the deterministic summary. Default false.
	Strict bool `yaml:"strict" json:"strict"`
	// ToolOutputChars is how much of each tool output the model sees; the rest
	// is cut with a note. Default 1500.
	ToolOutputChars int `yaml:"tool_output_chars" json:"tool_output_chars"`
}

// Validate reports every problem of the config.
func (c *Config) Validate() error {
	return errors.Join(c.SummarizeConfig.Validate(), bounds.AtLeast("tool_output_chars", c.ToolOutputChars, 100))
}

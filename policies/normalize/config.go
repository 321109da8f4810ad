package normalize

// Config is the normalize (and repair) policy's settings.
type Config struct {
	// DropOldReasoning drops every reasoning part from assistant messages older
	// than the latest assistant turn (the turn, opened by a regular user message,
	// that holds the last assistant message). Reasoning of the latest turn is
	// always kept byte-identical: providers verify its signatures. Default false.
	DropOldReasoning bool `yaml:"drop_old_reasoning" json:"drop_old_reasoning"`
}

// Validate reports problems of the config; every setting is valid.
func (c *Config) Validate() error { return nil }

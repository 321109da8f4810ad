package estimate

// Config is the estimate policy's settings: it has none, because the model's
// counter (resolved by the runner before the first stage) decides how to count.
type Config struct{}

// Validate reports problems of the config; there are none.
func (c *Config) Validate() error { return nil }

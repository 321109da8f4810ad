package render

// Config is the render policy's settings. What to render is a per-call
// option (CompileOptions.render), so there is nothing to set in a profile.
type Config struct{}

// Validate reports problems of the config; there are none.
func (c *Config) Validate() error { return nil }

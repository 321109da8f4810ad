package llm

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/bounds"
)

// Config is one helper model: which model, on which endpoint, with which
// limits.
type Config struct {
	// Model is the model name sent to the endpoint ("gpt-4o-mini", "llama3.2").
	Model string `yaml:"model" json:"model"`
	// BaseURL is the OpenAI-compatible API root ("https://api.openai.com/v1",
	// "http://localhost:11434/v1" for Ollama).
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKeyEnv names the environment variable holding the API key; it is read
	// once at start and never logged. Empty sends no key (local endpoints).
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env"`
	// Provider is reported as gen_ai.provider.name ("openai", "ollama", "vllm").
	// Default "openai".
	Provider string `yaml:"provider" json:"provider"`
	// Timeout bounds one call, retries included; the request's deadline bounds
	// it too. Default 30s.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// MaxRetries is how many times a retryable failure (429, 5xx, connection
	// error) is retried. Default 2.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// ContextWindow is the model's own window in tokens; prompts larger than it
	// are chunked by the caller. Default 8192.
	ContextWindow int `yaml:"context_window" json:"context_window"`
	// BreakerFailures is how many consecutive failed attempts on the endpoint
	// open its circuit breaker. Default 5.
	BreakerFailures int `yaml:"breaker_failures" json:"breaker_failures"`
	// BreakerCooldown is how long an open breaker refuses calls before one
	// probe is let through. Default 30s.
	BreakerCooldown time.Duration `yaml:"breaker_cooldown" json:"breaker_cooldown"`
	// MaxReplyBytes bounds an HTTP answer's body; a larger one fails the
	// attempt without being read further. Default 1 MiB (16K-token plans
	// and summaries are a tenth of it).
	MaxReplyBytes int `yaml:"max_reply_bytes" json:"max_reply_bytes"`
	// FallbackReserve is the share of the time left before the caller's
	// deadline that a call leaves unused, so that the policy's deterministic
	// fallback still has time when the model hangs. Default 0.25.
	FallbackReserve float64 `yaml:"fallback_reserve" json:"fallback_reserve"`
}

// DefaultConfig returns a Config with every default set and no model.
func DefaultConfig() Config {
	return Config{
		Provider:        "openai",
		Timeout:         30 * time.Second,
		MaxRetries:      2,
		ContextWindow:   8192,
		BreakerFailures: 5,
		BreakerCooldown: 30 * time.Second,
		MaxReplyBytes:   1 << 20,
		FallbackReserve: 0.25,
	}
}

// Validate reports every problem of the config.
func (c *Config) Validate() error {
	var errs []error
	if c.Model == "" {
		errs = append(errs, errors.New("model: empty"))
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base_url: %q is not an http(s) URL", c.BaseURL))
	} else if c.APIKeyEnv != "" && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		errs = append(errs, fmt.Errorf("api_key_env: the key in %s would travel in plain text to %s; use an https base_url (or a loopback one)", c.APIKeyEnv, u.Host))
	}
	errs = append(errs,
		bounds.Positive("timeout", c.Timeout),
		bounds.Closed("max_retries", c.MaxRetries, 0, 10),
		bounds.AtLeast("context_window", c.ContextWindow, 512),
		bounds.AtLeast("breaker_failures", c.BreakerFailures, 1),
		bounds.Positive("breaker_cooldown", c.BreakerCooldown),
		bounds.AtLeast("max_reply_bytes", c.MaxReplyBytes, 1024),
	)
	if c.FallbackReserve < 0 || c.FallbackReserve > 0.9 {
		errs = append(errs, fmt.Errorf("fallback_reserve: %v must be in [0, 0.9]", c.FallbackReserve))
	}
	return errors.Join(errs...)
}

// loopbackHost reports whether host names this machine: localhost or a
// loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// ModelsConfig is the config file's `models` section for helper models
// (the primary model comes with each request). A nil entry means no such model: the policies then use their
// deterministic fallbacks.
type ModelsConfig struct {
	Planner    *Config `yaml:"planner" json:"planner"`
	Summarizer *Config `yaml:"summarizer" json:"summarizer"`
}

// Validate reports every problem of the configured models.
func (c *ModelsConfig) Validate() error {
	var errs []error
	if c.Planner != nil {
		if err := c.Planner.Validate(); err != nil {
			errs = append(errs, prefix("planner", err))
		}
	}
	if c.Summarizer != nil {
		if err := c.Summarizer.Validate(); err != nil {
			errs = append(errs, prefix("summarizer", err))
		}
	}
	return errors.Join(errs...)
}

// prefix puts name. before each joined error's lines.
func prefix(name string, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = append(errs, fmt.Errorf("%s.%w", name, e))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("%s.%w", name, err)
}

// UnmarshalYAML decodes a model entry over DefaultConfig, so a config file
// names only what differs from the defaults.
func (c *Config) UnmarshalYAML(node *yaml.Node) error {
	type plain Config
	v := plain(DefaultConfig())
	if err := node.Decode(&v); err != nil {
		return err
	}
	*c = Config(v)
	return nil
}

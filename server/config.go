package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/internal/yamlkeys"
	"github.com/contextcompiler/ctxc/policies"
)

// Config is the service's configuration: what the YAML config file
// (docs/configuration.md) decodes into, key for key, plus a few fields only a
// Go program sets (Logger, TracerProvider, Version). Start it from
// NewConfig or LoadConfigFile, so that what is not set keeps its default.
// `ctxc serve` layers its flags and CTXC_* variables over the same struct.
type Config struct {
	Listen            string        `yaml:"listen"`
	MetricsListen     string        `yaml:"metrics_listen"`
	HTTPListen        string        `yaml:"http_listen"`
	Reflection        bool          `yaml:"reflection"`
	MaxMessageBytes   int           `yaml:"max_message_bytes"`
	GracePeriod       time.Duration `yaml:"grace_period"`
	LogLevel          string        `yaml:"log_level"`
	LogFormat         string        `yaml:"log_format"`
	TokenCacheEntries int           `yaml:"token_cache_entries"`
	// ScheduleCacheBytes bounds pipeline.ScheduleCache: where the
	// compaction schedules of earlier compiles stood, so that a stateless
	// compile of a log that only grew resumes there.
	ScheduleCacheBytes int    `yaml:"schedule_cache_bytes"`
	DefaultProfile     string `yaml:"default_profile"`

	// Security: TLS (mTLS with a client CA) and bearer tokens, on the gRPC
	// and HTTP ports alike. Insecure allows neither on a non-loopback address.
	TLSCert       string `yaml:"tls_cert"`
	TLSKey        string `yaml:"tls_key"`
	TLSClientCA   string `yaml:"tls_client_ca"`
	AuthTokenFile string `yaml:"auth_token_file"`
	Insecure      bool   `yaml:"insecure"`
	// MetricsInsecure serves /metrics in the clear, without the API's TLS
	// and tokens, for a scraper a network policy alone lets in.
	MetricsInsecure bool `yaml:"metrics_insecure"`

	// Limits and HTTPLimits are the servers' limits, their keys at the top
	// level of the file (max_concurrent_calls, http_read_timeout, ...).
	Limits     `yaml:",inline"`
	HTTPLimits `yaml:",inline"`
	DrainDelay time.Duration `yaml:"drain_delay"`

	// The HTTP gateway's browser-facing rules.
	HTTPCORSOrigins    []string `yaml:"http_cors_origins"`
	HTTPAllowedHosts   []string `yaml:"http_allowed_hosts"`
	HTTPTrustedProxies []string `yaml:"http_trusted_proxies"`
	// HTTPUI serves the context inspector page at /ui/ of the HTTP port:
	// "auto" (on when http_listen is a loopback address), "on" or "off".
	HTTPUI string `yaml:"http_ui"`

	// Profiles, the model registry, the helper models and the summary cache
	// are set only in the YAML file (or here); their types' fields are the
	// file's keys.
	Profiles []ProfileSpec `yaml:"profiles"`
	// ModelRegistry adds or overrides entries of the built-in model registry.
	ModelRegistry []ModelEntry `yaml:"model_registry"`
	// Models are the helper models of the llm_plan and llm_summarize policies;
	// the primary model is each request's.
	Models HelperModels `yaml:"models"`
	// SummaryCache caches LLM summaries and plans: in memory, or in Redis when
	// redis_url is set so that replicas share it.
	SummaryCache SummaryCacheConfig `yaml:"summary_cache"`
	// StateRefs keeps the states calls may name by reference
	// (base_state_ref): in memory, and in the summary cache's Redis when it
	// has one, so that replicas resolve each other's references.
	StateRefs StateRefsConfig `yaml:"state_refs"`
	// Proxy configures the provider-compatible endpoints on the HTTP port.
	Proxy ProxyConfig `yaml:"proxy"`
	// Quotas bound what each caller (a token's name) may hold of the server
	// and how fast it may call, so that one caller cannot crowd out the
	// others; none by default (docs/running-safely.md).
	Quotas Quotas `yaml:"quotas"`

	// Policies are policy factories of the program's own, served beside the
	// built-in ones (no file key: a Go program sets them). A profile's step
	// names one by its Type like any built-in policy, its settings decoded
	// over its CreateDefaultConfig. A type that a built-in policy or an
	// earlier entry already has is a configuration error naming both
	// (docs/extending.md).
	Policies []policies.Factory `yaml:"-"`

	// Path is the YAML file the config was read from ("" when none); profiles
	// from it are listed with it as their source.
	Path string `yaml:"-"`
	// Logger receives the service's logs; nil: NewLogger(os.Stderr), as
	// log_level and log_format say.
	Logger *slog.Logger `yaml:"-"`
	// TracerProvider receives a span per call and per pipeline stage; nil
	// records none.
	TracerProvider trace.TracerProvider `yaml:"-"`
	// Version is this build's version, in the metrics and the start-up log;
	// "dev" when empty.
	Version string `yaml:"-"`
}

// NewConfig is the configuration with nothing set: what `ctxc serve` runs with
// when given no flag, variable or file.
func NewConfig() *Config {
	return &Config{
		Listen:             "127.0.0.1:50051",
		Reflection:         true,
		MaxMessageBytes:    service.DefaultMaxMessageBytes,
		GracePeriod:        service.DefaultGracePeriod,
		LogLevel:           "info",
		LogFormat:          "text",
		TokenCacheEntries:  100_000,
		ScheduleCacheBytes: pipeline.DefaultScheduleCacheBytes,
		DefaultProfile:     pipeline.DefaultProfileName,
		Limits:             DefaultLimits(),
		HTTPLimits:         DefaultHTTPLimits(),
		SummaryCache:       DefaultSummaryCacheConfig(),
		StateRefs:          DefaultStateRefsConfig(),
		HTTPUI:             uiAuto,
		Proxy:              defaultProxyConfig(),
	}
}

// LoadConfigFile is NewConfig with the YAML file at path decoded over it, and
// Path set. Unknown keys are errors, so that a typo does not silently fall
// back to a default; each problem of the file is its own error, joined. It
// does not validate the result: change what you need, then Validate or Start.
func LoadConfigFile(path string) (*Config, error) {
	cfg := NewConfig()
	if err := cfg.decodeFile(path); err != nil {
		return nil, err
	}
	cfg.Path = path
	return cfg, nil
}

// ParseConfig is NewConfig with the YAML document data decoded over it, as
// LoadConfigFile decodes a file (Path stays empty).
func ParseConfig(data []byte) (*Config, error) {
	cfg := NewConfig()
	if err := cfg.decode(data, "(data)"); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decodeFile decodes the YAML file over c.
func (c *Config) decodeFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	return c.decode(data, path)
}

// decode decodes the YAML document data, from the file path, over c. Its
// errors name the file's keys and sections, not Go's types (yamlkeys).
func (c *Config) decode(data []byte, path string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	// An empty file is an empty config.
	err := yamlkeys.Decode(&doc, c, "")
	if err == nil {
		return nil
	}
	all := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		all = joined.Unwrap()
	}
	problems := make([]error, len(all))
	for i, e := range all {
		text := e.Error()
		if strings.Contains(text, ": models: a list is not") {
			text += " (models holds the helper models planner and summarizer; model entries go under model_registry)"
		}
		problems[i] = fmt.Errorf("config file %s: %s", path, text)
	}
	return errors.Join(problems...)
}

// NewLogger is the logger log_level and log_format describe, writing to w: the
// one the service logs with when Logger is nil, writing to os.Stderr. An
// invalid level (Validate reports it) logs at info.
func (c *Config) NewLogger(w io.Writer) *slog.Logger {
	level, _ := parseLevel(c.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// logger is the logger the service logs with.
func (c *Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return c.NewLogger(os.Stderr)
}

// limits are the gRPC server's limits as configured.
func (c *Config) limits() Limits { return c.Limits }

// httpLimits are the HTTP gateway's limits as configured: max_header_bytes
// bounds both ports' headers.
func (c *Config) httpLimits() HTTPLimits {
	l := c.HTTPLimits
	l.MaxHeaderBytes = c.Limits.MaxHeaderBytes
	return l
}

// Validate checks every setting and how they fit together, and returns every
// problem at once (errors.Join), each naming its key ("listen: ..."). The
// model registry, the helper models, the summary cache and the profiles are
// checked as they are built (NewEngine, Start), and the refusal to serve in
// the open (Start), in the same list.
func (c *Config) Validate() error { return errors.Join(c.validate()...) }

func (c *Config) validate() []error {
	var problems []error
	bad := func(key, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if err := checkAddress(c.Listen, true); err != nil {
		bad("listen", "%v", err)
	}
	if c.MetricsListen != "" {
		if err := checkAddress(c.MetricsListen, false); err != nil {
			bad("metrics_listen", "%v", err)
		}
	}
	if c.HTTPListen != "" {
		if err := checkAddress(c.HTTPListen, false); err != nil {
			bad("http_listen", "%v", err)
		}
	}
	switch c.HTTPUI {
	case uiAuto, uiOff:
	case uiOn:
		if c.HTTPListen == "" {
			bad("http_ui", "on needs http_listen: the page is served on the HTTP port")
		}
	default:
		bad("http_ui", "%q must be auto, on or off", c.HTTPUI)
	}
	if c.MaxMessageBytes < 1<<10 || c.MaxMessageBytes > 1<<30 {
		bad("max_message_bytes", "%d must be between 1024 and 1073741824", c.MaxMessageBytes)
	}
	if c.GracePeriod < 0 {
		bad("grace_period", "%s must not be negative", c.GracePeriod)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		bad("log_level", "%v", err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log_format", "%q must be text or json", c.LogFormat)
	}
	if c.TokenCacheEntries < 0 {
		bad("token_cache_entries", "%d must not be negative", c.TokenCacheEntries)
	}
	if c.ScheduleCacheBytes < 0 {
		bad("schedule_cache_bytes", "%d must not be negative", c.ScheduleCacheBytes)
	}
	if c.DefaultProfile == "" {
		bad("default_profile", "must not be empty")
	}
	problems = append(problems, c.validateSecurity()...)
	problems = append(problems, c.validateLimits()...)
	problems = append(problems, c.validateProxy()...)
	refs := c.StateRefs.internal()
	if err := refs.Validate(); err != nil {
		problems = append(problems, fmt.Errorf("state_refs: %w", err))
	}
	problems = append(problems, c.Quotas.internal().Validate(c.MaxMessageBytes)...)
	// model_registry, models, summary_cache and profiles are checked as the
	// engine is built from them (newEngine), in the same list.
	return problems
}

func checkAddress(addr string, unixAllowed bool) error {
	if path, ok := service.UnixSocketPath(addr); ok {
		if !unixAllowed {
			return fmt.Errorf("%q: a Unix socket is not supported here", addr)
		}
		if path == "" {
			return fmt.Errorf("%q: the socket path is empty", addr)
		}
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %v", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	switch s {
	case "debug", "info", "warn", "error":
		return l, l.UnmarshalText([]byte(s))
	}
	return l, fmt.Errorf("%q must be debug, info, warn or error", s)
}

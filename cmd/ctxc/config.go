package main

import (
	"bytes"
	"errors"
	"flag"
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

	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/policies/pipeline"
	"github.com/contextcompiler/ctxc/internal/server"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/internal/tokens"
)

// Config is the server's configuration. Precedence, highest first: command-line
// flags, CTXC_* environment variables, the YAML file given by --config, defaults.
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

	// Limits (server.Limits and server.HTTPLimits say what each bounds).
	MaxConcurrentCalls          int           `yaml:"max_concurrent_calls"`
	MaxInflightBytes            int           `yaml:"max_inflight_bytes"`
	MaxQueueWait                time.Duration `yaml:"max_queue_wait"`
	MaxUnreadBytesPerConnection int           `yaml:"max_unread_bytes_per_connection"`
	MaxConcurrentStreams        int           `yaml:"max_concurrent_streams"`
	MaxConnections              int           `yaml:"max_connections"`
	MaxConnectionsPerAddress    int           `yaml:"max_connections_per_address"`
	DefaultCallTimeout          time.Duration `yaml:"default_call_timeout"`
	MaxCallTimeout              time.Duration `yaml:"max_call_timeout"`
	HandshakeTimeout            time.Duration `yaml:"handshake_timeout"`
	KeepaliveMinTime            time.Duration `yaml:"keepalive_min_time"`
	MaxConnectionIdle           time.Duration `yaml:"max_connection_idle"`
	MaxConnectionAge            time.Duration `yaml:"max_connection_age"`
	MaxHeaderBytes              int           `yaml:"max_header_bytes"`
	HTTPReadHeaderTimeout       time.Duration `yaml:"http_read_header_timeout"`
	HTTPReadTimeout             time.Duration `yaml:"http_read_timeout"`
	HTTPWriteTimeout            time.Duration `yaml:"http_write_timeout"`
	HTTPIdleTimeout             time.Duration `yaml:"http_idle_timeout"`
	DrainDelay                  time.Duration `yaml:"drain_delay"`

	// The HTTP gateway's browser-facing rules.
	HTTPCORSOrigins    []string `yaml:"http_cors_origins"`
	HTTPAllowedHosts   []string `yaml:"http_allowed_hosts"`
	HTTPTrustedProxies []string `yaml:"http_trusted_proxies"`
	// HTTPUI serves the context inspector page at /ui/ of the HTTP port:
	// "auto" (on when http_listen is a loopback address), "on" or "off".
	HTTPUI string `yaml:"http_ui"`

	// Profiles, the model registry, the helper models and the summary cache are
	// set only in the YAML file.
	Profiles []pipeline.ProfileSpec `yaml:"profiles"`
	// ModelRegistry adds or overrides entries of the built-in model registry.
	ModelRegistry []tokens.ModelEntry `yaml:"model_registry"`
	// Models are the helper models of the llm_plan and llm_summarize policies;
	// the primary model is each request's.
	Models llm.ModelsConfig `yaml:"models"`
	// SummaryCache caches LLM summaries and plans: in memory, or in Redis when
	// redis_url is set so that replicas share it.
	SummaryCache summarycache.Config `yaml:"summary_cache"`
	// StateRefs keeps the states calls may name by reference
	// (base_state_ref): in memory, and in the summary cache's Redis when it
	// has one, so that replicas resolve each other's references.
	StateRefs stateref.Config `yaml:"state_refs"`
	// Proxy configures the provider-compatible endpoints on the HTTP port.
	Proxy ProxyConfig `yaml:"proxy"`

	// Path is the YAML file the config was read from ("" when none).
	Path string `yaml:"-"`
}

// defaultConfig is the configuration with nothing set.
func defaultConfig() Config {
	lim, httpLim := server.DefaultLimits(), server.DefaultHTTPLimits()
	return Config{
		Listen:             "127.0.0.1:50051",
		Reflection:         true,
		MaxMessageBytes:    server.DefaultMaxMessageBytes,
		GracePeriod:        server.DefaultGracePeriod,
		LogLevel:           "info",
		LogFormat:          "text",
		TokenCacheEntries:  100_000,
		ScheduleCacheBytes: pipeline.DefaultScheduleCacheBytes,
		DefaultProfile:     pipeline.DefaultProfileName,
		SummaryCache:       summarycache.DefaultConfig(),
		StateRefs:          stateref.DefaultConfig(),
		HTTPUI:             uiAuto,
		Proxy:              defaultProxyConfig(),

		MaxConcurrentCalls:          lim.MaxConcurrentCalls,
		MaxInflightBytes:            int(lim.MaxInflightBytes),
		MaxQueueWait:                lim.MaxQueueWait,
		MaxUnreadBytesPerConnection: int(lim.MaxUnreadBytesPerConnection),
		MaxConcurrentStreams:        lim.MaxConcurrentStreams,
		MaxConnections:              lim.MaxConnections,
		MaxConnectionsPerAddress:    lim.MaxConnectionsPerAddress,
		DefaultCallTimeout:          lim.DefaultCallTimeout,
		MaxCallTimeout:              lim.MaxCallTimeout,
		HandshakeTimeout:            lim.HandshakeTimeout,
		KeepaliveMinTime:            lim.KeepaliveMinTime,
		MaxConnectionIdle:           lim.MaxConnectionIdle,
		MaxConnectionAge:            lim.MaxConnectionAge,
		MaxHeaderBytes:              lim.MaxHeaderBytes,
		HTTPReadHeaderTimeout:       httpLim.ReadHeaderTimeout,
		HTTPReadTimeout:             httpLim.ReadTimeout,
		HTTPWriteTimeout:            httpLim.WriteTimeout,
		HTTPIdleTimeout:             httpLim.IdleTimeout,
	}
}

// limits are the gRPC server's limits as configured.
func (c *Config) limits() server.Limits {
	return server.Limits{
		MaxConcurrentCalls:          c.MaxConcurrentCalls,
		MaxInflightBytes:            int64(c.MaxInflightBytes),
		MaxQueueWait:                c.MaxQueueWait,
		MaxUnreadBytesPerConnection: int64(c.MaxUnreadBytesPerConnection),
		MaxConcurrentStreams:        c.MaxConcurrentStreams,
		MaxConnections:              c.MaxConnections,
		MaxConnectionsPerAddress:    c.MaxConnectionsPerAddress,
		DefaultCallTimeout:          c.DefaultCallTimeout,
		MaxCallTimeout:              c.MaxCallTimeout,
		HandshakeTimeout:            c.HandshakeTimeout,
		KeepaliveMinTime:            c.KeepaliveMinTime,
		MaxConnectionIdle:           c.MaxConnectionIdle,
		MaxConnectionAge:            c.MaxConnectionAge,
		MaxHeaderBytes:              c.MaxHeaderBytes,
	}
}

// httpLimits are the HTTP gateway's limits as configured.
func (c *Config) httpLimits() server.HTTPLimits {
	return server.HTTPLimits{ReadHeaderTimeout: c.HTTPReadHeaderTimeout, ReadTimeout: c.HTTPReadTimeout,
		WriteTimeout: c.HTTPWriteTimeout, IdleTimeout: c.HTTPIdleTimeout, MaxHeaderBytes: c.MaxHeaderBytes}
}

// setting is one scalar configuration value, settable by flag, environment
// variable and YAML key. The configuration table of docs/configuration.md lists these.
type setting struct {
	key   string // YAML key; the flag is the key with dashes, the variable CTXC_ + upper case
	usage string
	get   func(c *Config) string
	set   func(c *Config, v string) error
	bool  bool
}

// A key of a nested section ("proxy.timeout") is a flag and a variable of
// its own (--proxy-timeout, CTXC_PROXY_TIMEOUT).
func (s setting) flagName() string { return strings.NewReplacer("_", "-", ".", "-").Replace(s.key) }
func (s setting) envName() string {
	return "CTXC_" + strings.ToUpper(strings.ReplaceAll(s.key, ".", "_"))
}

// settings lists every scalar setting, in the order --help shows them.
func settings() []setting {
	str := func(key, usage string, field func(c *Config) *string) setting {
		return setting{key: key, usage: usage,
			get: func(c *Config) string { return *field(c) },
			set: func(c *Config, v string) error { *field(c) = v; return nil }}
	}
	num := func(key, usage string, field func(c *Config) *int) setting {
		return setting{key: key, usage: usage,
			get: func(c *Config) string { return strconv.Itoa(*field(c)) },
			set: func(c *Config, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%q is not an integer", v)
				}
				*field(c) = n
				return nil
			}}
	}
	boolean := func(key, usage string, field func(c *Config) *bool) setting {
		return setting{key: key, usage: usage, bool: true,
			get: func(c *Config) string { return strconv.FormatBool(*field(c)) },
			set: func(c *Config, v string) error {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return fmt.Errorf("%q is not a boolean", v)
				}
				*field(c) = b
				return nil
			}}
	}
	dur := func(key, usage string, field func(c *Config) *time.Duration) setting {
		return setting{key: key, usage: usage,
			get: func(c *Config) string { return field(c).String() },
			set: func(c *Config, v string) error {
				d, err := time.ParseDuration(v)
				if err != nil {
					return fmt.Errorf("%q is not a duration such as 10s", v)
				}
				*field(c) = d
				return nil
			}}
	}
	// A list is comma-separated in a flag or variable, a sequence in YAML.
	list := func(key, usage string, field func(c *Config) *[]string) setting {
		return setting{key: key, usage: usage,
			get: func(c *Config) string { return strings.Join(*field(c), ",") },
			set: func(c *Config, v string) error {
				var items []string
				for _, item := range strings.Split(v, ",") {
					if item = strings.TrimSpace(item); item != "" {
						items = append(items, item)
					}
				}
				*field(c) = items
				return nil
			}}
	}
	return []setting{
		str("listen", "gRPC address: host:port, unix:///path or unix:/path", func(c *Config) *string { return &c.Listen }),
		str("metrics_listen", "Prometheus /metrics address (host:port), with the API's TLS and tokens; empty turns metrics off", func(c *Config) *string { return &c.MetricsListen }),
		str("http_listen", "HTTP/JSON address (host:port): every RPC as POST /ctxc.v1.ContextCompilerService/<Method>, health at GET /healthz; empty turns it off", func(c *Config) *string { return &c.HTTPListen }),
		boolean("reflection", "register gRPC server reflection (for grpcurl)", func(c *Config) *bool { return &c.Reflection }),
		num("max_message_bytes", "largest request or response message in bytes; larger requests get RESOURCE_EXHAUSTED", func(c *Config) *int { return &c.MaxMessageBytes }),
		dur("grace_period", "on SIGTERM, after the drain delay, how long in-flight calls may take to finish", func(c *Config) *time.Duration { return &c.GracePeriod }),
		str("log_level", "debug, info, warn or error", func(c *Config) *string { return &c.LogLevel }),
		str("log_format", "text or json", func(c *Config) *string { return &c.LogFormat }),
		num("token_cache_entries", "token counts cached by (encoding, content hash); 0 turns the cache off", func(c *Config) *int { return &c.TokenCacheEntries }),
		num("schedule_cache_bytes", "bytes of compaction-schedule progress kept, so a stateless compile of a log that only grew resumes where an earlier compile stood instead of replaying its compaction points; 0 turns the cache off", func(c *Config) *int { return &c.ScheduleCacheBytes }),
		str("default_profile", "profile for requests that name none", func(c *Config) *string { return &c.DefaultProfile }),
		str("tls_cert", "PEM certificate chain: serve gRPC and HTTP over TLS (reloaded when the file changes)", func(c *Config) *string { return &c.TLSCert }),
		str("tls_key", "PEM private key of tls_cert", func(c *Config) *string { return &c.TLSKey }),
		str("tls_client_ca", "PEM CA certificates: require client certificates signed by them (mTLS)", func(c *Config) *string { return &c.TLSClientCA }),
		str("auth_token_file", `bearer tokens, one "<name> <token>" a line: every call but health must send "authorization: Bearer <token>" (reloaded when the file changes)`, func(c *Config) *string { return &c.AuthTokenFile }),
		boolean("insecure", "allow a non-loopback address with neither TLS nor authentication", func(c *Config) *bool { return &c.Insecure }),
		boolean("metrics_insecure", "serve /metrics as plain HTTP without tokens, on any address (for a scraper only a network policy lets in)", func(c *Config) *bool { return &c.MetricsInsecure }),
		num("max_concurrent_calls", "API calls received or worked on at once; more get RESOURCE_EXHAUSTED with a retry hint", func(c *Config) *int { return &c.MaxConcurrentCalls }),
		num("max_inflight_bytes", "summed size of the requests worked on at once; more wait up to max_queue_wait, then get RESOURCE_EXHAUSTED", func(c *Config) *int { return &c.MaxInflightBytes }),
		dur("max_queue_wait", "how long a call may wait for room under max_inflight_bytes (or for its connection to read its replies)", func(c *Config) *time.Duration { return &c.MaxQueueWait }),
		num("max_unread_bytes_per_connection", "reply bytes one gRPC connection may leave unread; past it, its next call waits up to max_queue_wait for the client to read, then gets RESOURCE_EXHAUSTED (0: no limit). Unread replies count in max_inflight_bytes until written", func(c *Config) *int { return &c.MaxUnreadBytesPerConnection }),
		num("max_concurrent_streams", "calls in flight on one gRPC connection", func(c *Config) *int { return &c.MaxConcurrentStreams }),
		num("max_connections", "open gRPC connections; when all are taken, the oldest that has made no authenticated API call is closed for a newcomer, else the newcomer waits", func(c *Config) *int { return &c.MaxConnections }),
		num("max_connections_per_address", "open connections of one client IP address on the gRPC port, and again on the HTTP port; more are closed at once (0: no limit; raise it behind a load balancer that hides clients' addresses)", func(c *Config) *int { return &c.MaxConnectionsPerAddress }),
		dur("default_call_timeout", "deadline of a call that sets none", func(c *Config) *time.Duration { return &c.DefaultCallTimeout }),
		dur("max_call_timeout", "longest deadline a call may have; longer ones are cut to it", func(c *Config) *time.Duration { return &c.MaxCallTimeout }),
		dur("handshake_timeout", "time a new gRPC connection has for its TLS and HTTP/2 handshake", func(c *Config) *time.Duration { return &c.HandshakeTimeout }),
		dur("keepalive_min_time", "shortest interval between a client's keepalive pings; faster pingers are disconnected", func(c *Config) *time.Duration { return &c.KeepaliveMinTime }),
		dur("max_connection_idle", "close a gRPC connection without calls for this long; 0 never", func(c *Config) *time.Duration { return &c.MaxConnectionIdle }),
		dur("max_connection_age", "close any gRPC connection after this long (its calls get max_call_timeout to finish); 0 never", func(c *Config) *time.Duration { return &c.MaxConnectionAge }),
		num("max_header_bytes", "largest header (metadata) of a gRPC call or HTTP request", func(c *Config) *int { return &c.MaxHeaderBytes }),
		dur("http_read_header_timeout", "time an HTTP request has to send its headers", func(c *Config) *time.Duration { return &c.HTTPReadHeaderTimeout }),
		dur("http_read_timeout", "time an HTTP request has to send its headers and body", func(c *Config) *time.Duration { return &c.HTTPReadTimeout }),
		dur("http_write_timeout", "time from an HTTP request's headers to the end of its answer; longer than max_call_timeout", func(c *Config) *time.Duration { return &c.HTTPWriteTimeout }),
		dur("http_idle_timeout", "how long a kept-alive HTTP connection may wait for its next request", func(c *Config) *time.Duration { return &c.HTTPIdleTimeout }),
		dur("drain_delay", "on SIGTERM, how long health says NOT_SERVING while calls are still accepted, before the ports close", func(c *Config) *time.Duration { return &c.DrainDelay }),
		list("http_cors_origins", "origins (https://app.example.com, or *) browsers may call the HTTP port from; empty turns CORS off", func(c *Config) *[]string { return &c.HTTPCORSOrigins }),
		list("http_allowed_hosts", "Host header values the HTTP port answers (against DNS rebinding); empty allows any", func(c *Config) *[]string { return &c.HTTPAllowedHosts }),
		str("http_ui", "the context inspector page at /ui/ of the HTTP port, behind its TLS and tokens: auto (on when http_listen is loopback), on or off", func(c *Config) *string { return &c.HTTPUI }),
		list("http_trusted_proxies", "proxy addresses or CIDRs whose X-Forwarded-For names the HTTP client", func(c *Config) *[]string { return &c.HTTPTrustedProxies }),
		str("proxy.openai_upstream", "base URL (https://api.openai.com) the proxy's OpenAI endpoints forward to: POST /v1/chat/completions and /v1/responses on the HTTP port; empty serves neither", func(c *Config) *string { return &c.Proxy.OpenAIUpstream }),
		str("proxy.anthropic_upstream", "base URL (https://api.anthropic.com) the proxy's Anthropic endpoints forward to: POST /v1/messages and /v1/messages/count_tokens; empty serves neither", func(c *Config) *string { return &c.Proxy.AnthropicUpstream }),
		str("proxy.gemini_upstream", "base URL (https://generativelanguage.googleapis.com) the proxy's Gemini endpoints forward to: POST /v1beta/models/{model}:generateContent and :streamGenerateContent; empty serves neither", func(c *Config) *string { return &c.Proxy.GeminiUpstream }),
		str("proxy.ollama_upstream", "base URL (http://127.0.0.1:11434) the proxy's Ollama endpoint forwards to: POST /api/chat; empty does not serve it", func(c *Config) *string { return &c.Proxy.OllamaUpstream }),
		str("proxy.profile", "profile of a proxied call that names none in X-Ctxc-Profile (proxy.profiles sets one per upstream)", func(c *Config) *string { return &c.Proxy.Profile }),
		num("proxy.max_context_tokens", "window of every proxied call, below the model's (0: the model's); X-Ctxc-Max-Context-Tokens sets one per call", func(c *Config) *int { return &c.Proxy.MaxContextTokens }),
		str("proxy.on_compile_error", "what a proxied call whose compile fails (a body ctxc cannot read, an unknown model) does: forward the client's body, or refuse with the provider's error", func(c *Config) *string { return &c.Proxy.OnCompileError }),
		dur("proxy.timeout", "one proxied call, from its headers to the end of the upstream's answer (a stream included)", func(c *Config) *time.Duration { return &c.Proxy.Timeout }),
		num("proxy.max_concurrent_calls", "proxied calls in flight; more get the provider's 429 with Retry-After", func(c *Config) *int { return &c.Proxy.MaxConcurrentCalls }),
	}
}

// configFlags registers --config and every setting on fs. Flag values stay
// raw strings so only the flags actually given override lower layers.
type configFlags struct {
	path   *string
	values map[string]*rawFlag
}

type rawFlag struct {
	def    string
	value  string
	isBool bool
}

func (r *rawFlag) String() string {
	if r == nil {
		return ""
	}
	return r.def
}
func (r *rawFlag) Set(v string) error { r.value = v; return nil }
func (r *rawFlag) IsBoolFlag() bool   { return r.isBool }

func registerConfigFlags(fs *flag.FlagSet, withSettings bool) *configFlags {
	cf := &configFlags{path: fs.String("config", "", "YAML config file (also CTXC_CONFIG); flags and CTXC_* variables override it"), values: map[string]*rawFlag{}}
	if !withSettings {
		return cf
	}
	def := defaultConfig()
	for _, s := range settings() {
		r := &rawFlag{def: s.get(&def), isBool: s.bool}
		cf.values[s.key] = r
		fs.Var(r, s.flagName(), s.usage+" (env "+s.envName()+")")
	}
	return cf
}

// load builds the configuration from the layers and validates it, reporting
// every problem at once.
func (cf *configFlags) load(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) (Config, error) {
	cfg := defaultConfig()
	path := *cf.path
	if path == "" {
		path, _ = lookupEnv("CTXC_CONFIG")
	}
	var problems []error
	if path != "" {
		if err := readConfigFile(path, &cfg); err != nil {
			return cfg, &configFileError{err}
		}
		cfg.Path = path
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range settings() {
		if v, ok := lookupEnv(s.envName()); ok {
			if err := s.set(&cfg, v); err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", s.envName(), err))
			}
		}
		if r, ok := cf.values[s.key]; ok && given[s.flagName()] {
			if err := s.set(&cfg, r.value); err != nil {
				problems = append(problems, fmt.Errorf("--%s: %w", s.flagName(), err))
			}
		}
	}
	problems = append(problems, cfg.validate()...)
	return cfg, errors.Join(problems...)
}

// configFileError is a config file that cannot be read or decoded: nothing
// built from the configuration can be checked after it.
type configFileError struct{ err error }

func (e *configFileError) Error() string { return e.err.Error() }
func (e *configFileError) Unwrap() error { return e.err }

// setUp reads the configuration and builds the engine from it, returning every
// problem of both at once (a bad setting, model registry entry, helper model,
// cache or profile), so that one run lists them all.
// The engine's parts (helper model clients, the Redis client) log to logTo.
func setUp(fs *flag.FlagSet, cf *configFlags, lookupEnv func(string) (string, bool), tp trace.TracerProvider, logTo io.Writer) (Config, *engine, error) {
	cfg, err := cf.load(fs, lookupEnv)
	var fileErr *configFileError
	if errors.As(err, &fileErr) {
		return cfg, nil, err
	}
	eng, engErr := newEngine(cfg, tp, newLogger(logTo, cfg))
	if err != nil || engErr != nil {
		if eng != nil {
			eng.close()
		}
		return cfg, nil, errors.Join(err, engErr)
	}
	return cfg, eng, nil
}

// readConfigFile decodes the YAML file over cfg; unknown keys are errors, so a
// typo does not silently fall back to a default. Each problem of the file is
// its own error.
func readConfigFile(path string, cfg *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// An empty file (io.EOF) is an empty config.
	err = dec.Decode(cfg)
	var typeErr *yaml.TypeError
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &typeErr):
		problems := make([]error, len(typeErr.Errors))
		for i, e := range typeErr.Errors {
			if strings.Contains(e, "into llm.ModelsConfig") {
				e += " (models holds the helper models planner and summarizer; model entries go under model_registry)"
			}
			problems[i] = fmt.Errorf("config file %s: %s", path, strings.TrimSpace(e))
		}
		return errors.Join(problems...)
	}
	return fmt.Errorf("config file %s: %w", path, err)
}

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
	if err := c.StateRefs.Validate(); err != nil {
		problems = append(problems, fmt.Errorf("state_refs: %w", err))
	}
	// model_registry, models, summary_cache and profiles are checked as the
	// engine is built from them (newEngine), in the same list.
	return problems
}

func checkAddress(addr string, unixAllowed bool) error {
	if path, ok := server.UnixSocketPath(addr); ok {
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

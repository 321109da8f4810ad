package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/contextcompiler/ctxc/server"
)

// defaultConfig is the configuration with nothing set (server.NewConfig).
func defaultConfig() server.Config { return *server.NewConfig() }

// setting is one scalar configuration value, settable by flag, environment
// variable and YAML key. The configuration table of docs/configuration.md lists these.
type setting struct {
	key   string // YAML key; the flag is the key with dashes, the variable CTXC_ + upper case
	usage string
	get   func(c *server.Config) string
	set   func(c *server.Config, v string) error
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
	str := func(key, usage string, field func(c *server.Config) *string) setting {
		return setting{key: key, usage: usage,
			get: func(c *server.Config) string { return *field(c) },
			set: func(c *server.Config, v string) error { *field(c) = v; return nil }}
	}
	num := func(key, usage string, field func(c *server.Config) *int) setting {
		return setting{key: key, usage: usage,
			get: func(c *server.Config) string { return strconv.Itoa(*field(c)) },
			set: func(c *server.Config, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%q is not an integer", v)
				}
				*field(c) = n
				return nil
			}}
	}
	num64 := func(key, usage string, field func(c *server.Config) *int64) setting {
		return setting{key: key, usage: usage,
			get: func(c *server.Config) string { return strconv.FormatInt(*field(c), 10) },
			set: func(c *server.Config, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%q is not an integer", v)
				}
				*field(c) = int64(n)
				return nil
			}}
	}
	boolean := func(key, usage string, field func(c *server.Config) *bool) setting {
		return setting{key: key, usage: usage, bool: true,
			get: func(c *server.Config) string { return strconv.FormatBool(*field(c)) },
			set: func(c *server.Config, v string) error {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return fmt.Errorf("%q is not a boolean", v)
				}
				*field(c) = b
				return nil
			}}
	}
	dur := func(key, usage string, field func(c *server.Config) *time.Duration) setting {
		return setting{key: key, usage: usage,
			get: func(c *server.Config) string { return field(c).String() },
			set: func(c *server.Config, v string) error {
				d, err := time.ParseDuration(v)
				if err != nil {
					return fmt.Errorf("%q is not a duration such as 10s", v)
				}
				*field(c) = d
				return nil
			}}
	}
	// A list is comma-separated in a flag or variable, a sequence in YAML.
	list := func(key, usage string, field func(c *server.Config) *[]string) setting {
		return setting{key: key, usage: usage,
			get: func(c *server.Config) string { return strings.Join(*field(c), ",") },
			set: func(c *server.Config, v string) error {
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
		str("listen", "gRPC address: host:port, unix:///path or unix:/path", func(c *server.Config) *string { return &c.Listen }),
		str("metrics_listen", "Prometheus /metrics address (host:port), with the API's TLS and tokens; empty turns metrics off", func(c *server.Config) *string { return &c.MetricsListen }),
		str("http_listen", "HTTP/JSON address (host:port): every RPC as POST /ctxc.v1.ContextCompilerService/<Method>, health at GET /healthz; empty turns it off", func(c *server.Config) *string { return &c.HTTPListen }),
		boolean("reflection", "register gRPC server reflection (for grpcurl)", func(c *server.Config) *bool { return &c.Reflection }),
		num("max_message_bytes", "largest request or response message in bytes; larger requests get RESOURCE_EXHAUSTED", func(c *server.Config) *int { return &c.MaxMessageBytes }),
		dur("grace_period", "on SIGTERM, after the drain delay, how long in-flight calls may take to finish", func(c *server.Config) *time.Duration { return &c.GracePeriod }),
		str("log_level", "debug, info, warn or error", func(c *server.Config) *string { return &c.LogLevel }),
		str("log_format", "text or json", func(c *server.Config) *string { return &c.LogFormat }),
		num("token_cache_entries", "token counts cached by (encoding, content hash); 0 turns the cache off", func(c *server.Config) *int { return &c.TokenCacheEntries }),
		num("schedule_cache_bytes", "bytes of compaction-schedule progress kept, so a stateless compile of a log that only grew resumes where an earlier compile stood instead of replaying its compaction points; 0 turns the cache off", func(c *server.Config) *int { return &c.ScheduleCacheBytes }),
		str("default_profile", "profile for requests that name none", func(c *server.Config) *string { return &c.DefaultProfile }),
		str("tls_cert", "PEM certificate chain: serve gRPC and HTTP over TLS (reloaded when the file changes)", func(c *server.Config) *string { return &c.TLSCert }),
		str("tls_key", "PEM private key of tls_cert", func(c *server.Config) *string { return &c.TLSKey }),
		str("tls_client_ca", "PEM CA certificates: require client certificates signed by them (mTLS)", func(c *server.Config) *string { return &c.TLSClientCA }),
		str("auth_token_file", `bearer tokens, one "<name> <token>" a line: every call but health must send "authorization: Bearer <token>" (reloaded when the file changes)`, func(c *server.Config) *string { return &c.AuthTokenFile }),
		boolean("insecure", "allow a non-loopback address with neither TLS nor authentication", func(c *server.Config) *bool { return &c.Insecure }),
		boolean("metrics_insecure", "serve /metrics as plain HTTP without tokens, on any address (for a scraper only a network policy lets in)", func(c *server.Config) *bool { return &c.MetricsInsecure }),
		num("max_concurrent_calls", "API calls received or worked on at once; more get RESOURCE_EXHAUSTED with a retry hint", func(c *server.Config) *int { return &c.MaxConcurrentCalls }),
		num64("max_inflight_bytes", "summed size of the requests worked on at once; more wait up to max_queue_wait, then get RESOURCE_EXHAUSTED", func(c *server.Config) *int64 { return &c.MaxInflightBytes }),
		dur("max_queue_wait", "how long a call may wait for room under max_inflight_bytes (or for its connection to read its replies)", func(c *server.Config) *time.Duration { return &c.MaxQueueWait }),
		num64("max_unread_bytes_per_connection", "reply bytes one gRPC connection may leave unread; past it, its next call waits up to max_queue_wait for the client to read, then gets RESOURCE_EXHAUSTED (0: no limit). Unread replies count in max_inflight_bytes until written", func(c *server.Config) *int64 { return &c.MaxUnreadBytesPerConnection }),
		num("max_concurrent_streams", "calls in flight on one gRPC connection", func(c *server.Config) *int { return &c.MaxConcurrentStreams }),
		num("max_connections", "open gRPC connections; when all are taken, the oldest that has made no authenticated API call is closed for a newcomer, else the newcomer waits", func(c *server.Config) *int { return &c.MaxConnections }),
		num("max_connections_per_address", "open connections of one client IP address on the gRPC port, and again on the HTTP port; more are closed at once (0: no limit; raise it behind a load balancer that hides clients' addresses)", func(c *server.Config) *int { return &c.MaxConnectionsPerAddress }),
		dur("default_call_timeout", "deadline of a call that sets none", func(c *server.Config) *time.Duration { return &c.DefaultCallTimeout }),
		dur("max_call_timeout", "longest deadline a call may have; longer ones are cut to it", func(c *server.Config) *time.Duration { return &c.MaxCallTimeout }),
		dur("handshake_timeout", "time a new gRPC connection has for its TLS and HTTP/2 handshake", func(c *server.Config) *time.Duration { return &c.HandshakeTimeout }),
		dur("keepalive_min_time", "shortest interval between a client's keepalive pings; faster pingers are disconnected", func(c *server.Config) *time.Duration { return &c.KeepaliveMinTime }),
		dur("max_connection_idle", "close a gRPC connection without calls for this long; 0 never", func(c *server.Config) *time.Duration { return &c.MaxConnectionIdle }),
		dur("max_connection_age", "close any gRPC connection after this long (its calls get max_call_timeout to finish); 0 never", func(c *server.Config) *time.Duration { return &c.MaxConnectionAge }),
		num("max_header_bytes", "largest header (metadata) of a gRPC call or HTTP request", func(c *server.Config) *int { return &c.Limits.MaxHeaderBytes }),
		dur("http_read_header_timeout", "time an HTTP request has to send its headers", func(c *server.Config) *time.Duration { return &c.HTTPLimits.ReadHeaderTimeout }),
		dur("http_read_timeout", "time an HTTP request has to send its headers and body", func(c *server.Config) *time.Duration { return &c.HTTPLimits.ReadTimeout }),
		dur("http_write_timeout", "time from an HTTP request's headers to the end of its answer; longer than max_call_timeout", func(c *server.Config) *time.Duration { return &c.HTTPLimits.WriteTimeout }),
		dur("http_idle_timeout", "how long a kept-alive HTTP connection may wait for its next request", func(c *server.Config) *time.Duration { return &c.HTTPLimits.IdleTimeout }),
		dur("drain_delay", "on SIGTERM, how long health says NOT_SERVING while calls are still accepted, before the ports close", func(c *server.Config) *time.Duration { return &c.DrainDelay }),
		list("http_cors_origins", "origins (https://app.example.com, or *) browsers may call the HTTP port from; empty turns CORS off", func(c *server.Config) *[]string { return &c.HTTPCORSOrigins }),
		list("http_allowed_hosts", "Host header values the HTTP port answers (against DNS rebinding); empty allows any", func(c *server.Config) *[]string { return &c.HTTPAllowedHosts }),
		str("http_ui", "the context inspector page at /ui/ of the HTTP port, behind its TLS and tokens: auto (on when http_listen is loopback), on or off", func(c *server.Config) *string { return &c.HTTPUI }),
		list("http_trusted_proxies", "proxy addresses or CIDRs whose X-Forwarded-For names the HTTP client", func(c *server.Config) *[]string { return &c.HTTPTrustedProxies }),
		str("proxy.openai_upstream", "base URL (https://api.openai.com) the proxy's OpenAI endpoints forward to: POST /v1/chat/completions and /v1/responses on the HTTP port; empty serves neither", func(c *server.Config) *string { return &c.Proxy.OpenAIUpstream }),
		str("proxy.anthropic_upstream", "base URL (https://api.anthropic.com) the proxy's Anthropic endpoints forward to: POST /v1/messages and /v1/messages/count_tokens; empty serves neither", func(c *server.Config) *string { return &c.Proxy.AnthropicUpstream }),
		str("proxy.gemini_upstream", "base URL (https://generativelanguage.googleapis.com) the proxy's Gemini endpoints forward to: POST /v1beta/models/{model}:generateContent and :streamGenerateContent; empty serves neither", func(c *server.Config) *string { return &c.Proxy.GeminiUpstream }),
		str("proxy.ollama_upstream", "base URL (http://127.0.0.1:11434) the proxy's Ollama endpoint forwards to: POST /api/chat; empty does not serve it", func(c *server.Config) *string { return &c.Proxy.OllamaUpstream }),
		str("proxy.profile", "profile of a proxied call that names none in X-Ctxc-Profile (proxy.profiles sets one per upstream)", func(c *server.Config) *string { return &c.Proxy.Profile }),
		num("proxy.max_context_tokens", "window of every proxied call, below the model's (0: the model's); X-Ctxc-Max-Context-Tokens sets one per call", func(c *server.Config) *int { return &c.Proxy.MaxContextTokens }),
		str("proxy.on_compile_error", "what a proxied call whose compile fails (a body ctxc cannot read, an unknown model) does: forward the client's body, or refuse with the provider's error", func(c *server.Config) *string { return &c.Proxy.OnCompileError }),
		dur("proxy.timeout", "one proxied call, from its headers to the end of the upstream's answer (a stream included)", func(c *server.Config) *time.Duration { return &c.Proxy.Timeout }),
		num("proxy.max_concurrent_calls", "proxied calls in flight; more get the provider's 429 with Retry-After", func(c *server.Config) *int { return &c.Proxy.MaxConcurrentCalls }),
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
func (cf *configFlags) load(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) (server.Config, error) {
	cfg, err := cf.layers(fs, lookupEnv)
	var fileErr *configFileError
	if errors.As(err, &fileErr) {
		return cfg, err
	}
	return cfg, errors.Join(err, cfg.Validate())
}

// layers builds the configuration from the layers: defaults, the config
// file, CTXC_* variables, flags. Its error lists the variables and flags
// whose values do not parse; it does not validate the result.
func (cf *configFlags) layers(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) (server.Config, error) {
	cfg := defaultConfig()
	path := *cf.path
	if path == "" {
		path, _ = lookupEnv("CTXC_CONFIG")
	}
	var problems []error
	if path != "" {
		file, err := server.LoadConfigFile(path)
		if err != nil {
			return cfg, &configFileError{err}
		}
		cfg = *file
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
func setUp(fs *flag.FlagSet, cf *configFlags, lookupEnv func(string) (string, bool), logTo io.Writer) (server.Config, *server.Engine, error) {
	cfg, err := cf.layers(fs, lookupEnv)
	var fileErr *configFileError
	if errors.As(err, &fileErr) {
		return cfg, nil, err
	}
	cfg.Logger = cfg.NewLogger(logTo)
	eng, engErr := server.NewEngine(&cfg) // validates too
	if err != nil || engErr != nil {
		if eng != nil {
			eng.Close()
		}
		return cfg, nil, errors.Join(err, engErr)
	}
	return cfg, eng, nil
}

package server

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/internal/tokens"
)

// The types of the config file's sections, so that a Go program can build
// them; their yaml tags are the file's keys. Each is this package's own, and
// converts to the internal type the engine is built with in one function
// beside it. Where the two have the same fields, that function is a Go
// conversion, so a field added to one and not the other does not compile;
// the defaults are the internal package's, converted (DefaultLimits, ...).

// Limits bound what the gRPC server accepts and how long it works on it:
// calls, bytes, connections and time. Each field's yaml tag is its key in
// the config file (max_concurrent_calls, ...); DefaultLimits() are safe for a
// sidecar on loopback. Config embeds it, so cfg.MaxConcurrentCalls is
// cfg.Limits.MaxConcurrentCalls.
type Limits struct {
	// MaxConcurrentCalls bounds the API calls being received or worked on.
	// It is checked when a call's headers arrive, before its message is
	// read, so it also bounds the memory of requests being received (at most
	// this many times max_message_bytes); a call over it is refused at once.
	MaxConcurrentCalls int `yaml:"max_concurrent_calls"`
	// MaxInflightBytes bounds the summed size of the requests being worked
	// on; a call that would pass it waits up to MaxQueueWait in arrival
	// order, then is refused. At least the message limit, so every request
	// that may be sent fits alone.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`
	// MaxQueueWait is how long a call may wait for room under MaxInflightBytes
	// (or under MaxUnreadBytesPerConnection).
	MaxQueueWait time.Duration `yaml:"max_queue_wait"`
	// MaxUnreadBytesPerConnection bounds the reply bytes queued on one
	// connection that its client has not read yet; past it, the
	// connection's next call waits up to MaxQueueWait for the client to
	// read, then is refused (0: no bound). Unread replies hold their bytes
	// of MaxInflightBytes until written, so a client that never reads holds
	// at most this much of it per connection.
	MaxUnreadBytesPerConnection int64 `yaml:"max_unread_bytes_per_connection"`
	// MaxConcurrentStreams bounds the calls in flight on one connection
	// (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS; clients queue the rest).
	MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
	// MaxConnections bounds open gRPC connections. When all are taken, a
	// newcomer takes the slot of the oldest connection that has made no
	// authenticated API call; if there is none, it waits.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerAddress bounds the open connections of one remote IP
	// address (0: no bound); more are closed as they are accepted, so that
	// one client cannot take every slot of MaxConnections.
	MaxConnectionsPerAddress int `yaml:"max_connections_per_address"`
	// DefaultCallTimeout is the deadline of a call that sets none;
	// MaxCallTimeout caps the deadline a client sets.
	DefaultCallTimeout time.Duration `yaml:"default_call_timeout"`
	MaxCallTimeout     time.Duration `yaml:"max_call_timeout"`
	// HandshakeTimeout bounds a new connection's TLS and HTTP/2 handshake.
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// KeepaliveMinTime is the shortest interval between client pings; a
	// client pinging more often is sent GOAWAY ("too_many_pings").
	KeepaliveMinTime time.Duration `yaml:"keepalive_min_time"`
	// MaxConnectionIdle closes a connection without calls for this long;
	// MaxConnectionAge closes any connection after this long (clients
	// reconnect, which spreads them over replicas), letting its calls run
	// for up to MaxCallTimeout more. 0 means no limit.
	MaxConnectionIdle time.Duration `yaml:"max_connection_idle"`
	MaxConnectionAge  time.Duration `yaml:"max_connection_age"`
	// MaxHeaderBytes bounds a call's header list (metadata), and an HTTP
	// request's headers.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
}

// DefaultLimits are the gRPC limits of NewConfig.
func DefaultLimits() Limits { return Limits(service.DefaultLimits()) }

func (l Limits) internal() service.Limits { return service.Limits(l) }

// HTTPLimits bound the HTTP port's requests (http_read_header_timeout,
// http_read_timeout, http_write_timeout, http_idle_timeout).
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout the
	// whole request with its body (a client trickling a body is cut off),
	// WriteTimeout the request from the end of its headers to the end of the
	// answer (so it must exceed the longest call), IdleTimeout a kept-alive
	// connection waiting for its next request.
	ReadHeaderTimeout time.Duration `yaml:"http_read_header_timeout"`
	ReadTimeout       time.Duration `yaml:"http_read_timeout"`
	WriteTimeout      time.Duration `yaml:"http_write_timeout"`
	IdleTimeout       time.Duration `yaml:"http_idle_timeout"`
	// MaxHeaderBytes is not read: Limits.MaxHeaderBytes (max_header_bytes)
	// bounds the headers of both ports, and it has no key of its own.
	MaxHeaderBytes int `yaml:"-"`
}

// DefaultHTTPLimits are the HTTP limits of NewConfig.
func DefaultHTTPLimits() HTTPLimits { return HTTPLimits(service.DefaultHTTPLimits()) }

func (l HTTPLimits) internal() service.HTTPLimits { return service.HTTPLimits(l) }

// ProfileSpec is one entry of profiles: a name and its policies in run order.
type ProfileSpec struct {
	// Name is what requests give in their profile field.
	Name string `yaml:"name" json:"name"`
	// Description says what the profile is for.
	Description string `yaml:"description" json:"description"`
	// RecentTurns is the recency window: the latest turns every compaction keeps
	// verbatim and contiguous. Default 1 (the current turn).
	RecentTurns *int `yaml:"recent_turns" json:"recent_turns"`
	// FitTargetRatio is the share of the usable window (window minus reserved
	// output) compaction aims at when it runs only because the context does
	// not fit, or the trigger names no target: so later turns append before
	// compaction is needed again. In (0, 1]. Default 0.75.
	FitTargetRatio *float64 `yaml:"fit_target_ratio" json:"fit_target_ratio"`
	// BoundedLog makes Compact remove the messages a summary covers from the
	// returned log, for clients that want the log to stop growing. Default false:
	// the canonical log keeps every message.
	BoundedLog bool `yaml:"bounded_log" json:"bounded_log"`
	// CompactOnExecutionEnd makes Route run this profile's compaction
	// schedule when a step ends an execution with a final answer, and persist
	// what it decided when the trigger fired (after a completed
	// answer, never inside a running tool loop; the trigger decides).
	CompactOnExecutionEnd bool `yaml:"compact_on_execution_end" json:"compact_on_execution_end"`
	// CompactOnExecutionError does the same when an execution ends with an
	// error. Default false.
	CompactOnExecutionError bool `yaml:"compact_on_execution_error" json:"compact_on_execution_error"`
	// Stages lists the policies in run order; their stages must follow the
	// stage table's order (policies.Stages).
	Stages []ProfileStep `yaml:"stages" json:"stages"`
}

func (p ProfileSpec) internal() pipeline.ProfileSpec {
	steps := make([]pipeline.StepSpec, len(p.Stages))
	for i, s := range p.Stages {
		steps[i] = s.internal()
	}
	return pipeline.ProfileSpec{Name: p.Name, Description: p.Description, RecentTurns: p.RecentTurns, FitTargetRatio: p.FitTargetRatio,
		BoundedLog: p.BoundedLog, CompactOnExecutionEnd: p.CompactOnExecutionEnd, CompactOnExecutionError: p.CompactOnExecutionError, Stages: steps}
}

// ProfileStep is one policy of a profile, with its settings.
type ProfileStep struct {
	// Policy is the policy type, such as "observation_masking" (or one of
	// Config.Policies).
	Policy string `yaml:"policy" json:"policy"`
	// Settings are decoded over the policy's defaults; unknown keys are errors.
	Settings yaml.Node `yaml:"settings" json:"-"`
}

func (s ProfileStep) internal() pipeline.StepSpec { return pipeline.StepSpec(s) }

// ModelEntry is one entry of model_registry: a model name (or name prefix)
// and what ctxc knows of it.
type ModelEntry struct {
	// Name is the model name, lower case; with Prefix, a name prefix.
	Name string `yaml:"name" json:"name"`
	// Prefix makes Name match every model name that starts with it.
	Prefix bool `yaml:"prefix" json:"prefix"`
	// Provider is openai, anthropic, google, mistral, ollama, ...
	Provider string `yaml:"provider" json:"provider"`
	// Encoding is the tiktoken encoding counted (cl100k_base, o200k_base,
	// p50k_base); empty with the chars estimator.
	Encoding string `yaml:"encoding" json:"encoding"`
	// Estimator is exact, calibrated or chars.
	Estimator string `yaml:"estimator" json:"estimator"`
	// Factor scales a calibrated count; 0 means the provider's default factor.
	Factor float64 `yaml:"factor" json:"factor"`
	// ContextWindow is the model's window in tokens (prompt plus output).
	ContextWindow int `yaml:"context_window" json:"context_window"`
	// MaxOutputTokens is the most tokens one reply may have.
	MaxOutputTokens int `yaml:"max_output_tokens" json:"max_output_tokens"`
	// Prices in US dollars per million tokens; 0 when unknown or free.
	InputPricePerMTok  float64 `yaml:"input_price_per_mtok" json:"input_price_per_mtok"`
	OutputPricePerMTok float64 `yaml:"output_price_per_mtok" json:"output_price_per_mtok"`
}

func (e ModelEntry) internal() tokens.ModelEntry { return tokens.ModelEntry(e) }

// HelperModels is the models section: the helper models of the llm_plan and
// llm_summarize policies (the primary model comes with each request). A nil
// entry means no such model: the policies then use their deterministic
// fallbacks.
type HelperModels struct {
	Planner    *HelperModel `yaml:"planner" json:"planner"`
	Summarizer *HelperModel `yaml:"summarizer" json:"summarizer"`
}

func (m HelperModels) internal() llm.ModelsConfig {
	var c llm.ModelsConfig
	if m.Planner != nil {
		p := m.Planner.internal()
		c.Planner = &p
	}
	if m.Summarizer != nil {
		s := m.Summarizer.internal()
		c.Summarizer = &s
	}
	return c
}

// HelperModel is one helper model: which model, on which OpenAI-compatible
// endpoint, with which limits. In the file, an entry names only what differs
// from DefaultHelperModel.
type HelperModel struct {
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
	// attempt without being read further. Default 1 MiB.
	MaxReplyBytes int `yaml:"max_reply_bytes" json:"max_reply_bytes"`
	// FallbackReserve is the share of the time left before the caller's
	// deadline that a call leaves unused, so that the policy's deterministic
	// fallback still has time when the model hangs. Default 0.25.
	FallbackReserve float64 `yaml:"fallback_reserve" json:"fallback_reserve"`
}

// DefaultHelperModel is a helper model with every default set and no model:
// what an entry of the models section is decoded over.
func DefaultHelperModel() HelperModel { return HelperModel(llm.DefaultConfig()) }

func (m HelperModel) internal() llm.Config { return llm.Config(m) }

// UnmarshalYAML decodes a models entry over DefaultHelperModel, so a config
// file names only what differs from the defaults.
func (m *HelperModel) UnmarshalYAML(node *yaml.Node) error {
	type plain HelperModel
	v := plain(DefaultHelperModel())
	if err := node.Decode(&v); err != nil {
		return err
	}
	*m = HelperModel(v)
	return nil
}

// SummaryCacheConfig is the summary_cache section: LLM summaries and plans
// cached in memory, or in Redis when redis_url is set.
type SummaryCacheConfig struct {
	// RedisURL ("redis://host:6379/0") selects Redis; empty keeps the cache in memory.
	RedisURL string `yaml:"redis_url" json:"redis_url"`
	// TTL is how long an entry lives. Default 24h.
	TTL time.Duration `yaml:"ttl" json:"ttl"`
	// MaxEntries bounds the in-memory cache, which also stands in front of
	// Redis so that a Redis outage does not turn every lookup into a model
	// call. When it is full, the caller holding the most entries gives up
	// its least recently used, so that one caller's flood does not push out
	// another's. Default 10000.
	MaxEntries int `yaml:"max_entries" json:"max_entries"`
	// KeyPrefix starts every Redis key. Default "ctxc:summary:".
	KeyPrefix string `yaml:"key_prefix" json:"key_prefix"`
	// RedisTimeout bounds each Redis operation, so an outage costs at most
	// this per lookup. Default 200ms.
	RedisTimeout time.Duration `yaml:"redis_timeout" json:"redis_timeout"`
}

// DefaultSummaryCacheConfig is the summary cache of NewConfig: in memory.
func DefaultSummaryCacheConfig() SummaryCacheConfig {
	return SummaryCacheConfig(summarycache.DefaultConfig())
}

func (c SummaryCacheConfig) internal() summarycache.Config { return summarycache.Config(c) }

// StateRefsConfig is the state_refs section: the states calls may name by
// reference (base_state_ref).
type StateRefsConfig struct {
	// TTL is how long a reference resolves after it was last given or
	// used. Default 1h.
	TTL time.Duration `yaml:"ttl" json:"ttl"`
	// MaxBytes bounds the memory of the states kept for references: their
	// size on the wire and 512 bytes a message, about what their decoded
	// form holds. The least recently used go first, and states never named
	// by a call go before those that were. 0 keeps no references: responses
	// carry no state_ref. Default 64 MiB.
	MaxBytes int64 `yaml:"max_bytes" json:"max_bytes"`
	// MaxBytesPerCaller bounds what one caller's states hold of MaxBytes,
	// counted as MaxBytes counts: a caller past it loses its own least
	// recently used states, never another's. 0 (the default) lets a caller
	// use all of MaxBytes while no other needs the room; whatever it is,
	// when memory is full the caller holding the most gives up its least
	// recently used first.
	MaxBytesPerCaller int64 `yaml:"max_bytes_per_caller" json:"max_bytes_per_caller"`
	// MaxRedisEntriesPerCaller bounds the entries one caller keeps in
	// Redis: past it the caller's oldest written go (a reference whose
	// entry went misses, and the client sends the whole state), never
	// another caller's. 0 keeps no count: each entry lives its TTL.
	// Default 100,000.
	MaxRedisEntriesPerCaller int `yaml:"max_redis_entries_per_caller" json:"max_redis_entries_per_caller"`
	// KeyPrefix starts every Redis key. Default "ctxc:state:".
	KeyPrefix string `yaml:"key_prefix" json:"key_prefix"`
}

// DefaultStateRefsConfig is the state_refs section of NewConfig.
func DefaultStateRefsConfig() StateRefsConfig { return StateRefsConfig(stateref.DefaultConfig()) }

func (c StateRefsConfig) internal() stateref.Config { return stateref.Config(c) }

// Quotas is the quotas section: the quota of every caller (Default) and, by
// caller name (a token's name from the token file, or a client
// certificate's common name), the quotas of those that differ. A caller's
// entry is its whole quota, so what it leaves out is unlimited, not the
// default. Without authentication every call is the one caller "", which
// has the default.
type Quotas struct {
	Default Quota            `yaml:"default"`
	Callers map[string]Quota `yaml:"callers"`
}

func (q Quotas) internal() service.Quotas {
	out := service.Quotas{Default: q.Default.internal()}
	if q.Callers != nil {
		out.Callers = make(map[string]service.Quota, len(q.Callers))
		for name, c := range q.Callers {
			out.Callers[name] = c.internal()
		}
	}
	return out
}

// Quota is what one caller may hold of the server at once, and how fast it
// may call; 0 is no quota (the server's limits alone hold). The yaml tags
// are the keys of quotas.default and quotas.callers.<name>.
type Quota struct {
	// MaxConcurrentCalls bounds the caller's API calls being received or
	// worked on, checked when a call's headers arrive, before the server's
	// max_concurrent_calls.
	MaxConcurrentCalls int `yaml:"max_concurrent_calls"`
	// MaxInflightBytes bounds the summed size of the caller's requests being
	// worked on (each request's size, held until its call ends), checked
	// before the call waits for room under the server's max_inflight_bytes.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`
	// CallsPerSecond is the rate of the caller's API calls over time, with
	// Burst calls at once above it (a token bucket of Burst tokens refilled
	// at CallsPerSecond).
	CallsPerSecond float64 `yaml:"calls_per_second"`
	Burst          int     `yaml:"burst"`
}

func (q Quota) internal() service.Quota { return service.Quota(q) }

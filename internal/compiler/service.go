package compiler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Catalog runs profiles; *pipeline.Catalog is the production one.
type Catalog interface {
	Run(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Compact(ctx context.Context, req pipeline.Request) (*pipeline.CompactResult, error)
	Profiles() []pipeline.ProfileInfo
	Profile(name string) (pipeline.ProfileInfo, error)
}

// TokenCounters finds a counter by model or by encoding, and the provider a
// model belongs to; *tokens.Service is the production one.
type TokenCounters interface {
	Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error)
	CounterForEncoding(name string) (agentstate.TokenCounter, error)
	// ProviderOf names the provider of a model from the registry, "" when unknown.
	ProviderOf(model string) string
}

// ProfileInfo describes one built profile (ListProfiles).
type ProfileInfo = pipeline.ProfileInfo

// SystemMessageID is the id of the system prompt message in compiled output.
const SystemMessageID = pipeline.SystemMessageID

// DefaultMaxMessageBytes is the message limit of a transport that sets none.
const DefaultMaxMessageBytes = 32 << 20

// Limits are the documented size limits of a request. Each is checked before
// the work it bounds, so an oversized request costs no more than reading it:
// the adapter checks those of the request's own fields while decoding it, and
// the use cases those of what a request expands to.
type Limits struct {
	// MaxMessages bounds the messages of a state's log, of an imported
	// conversation (and of a CountTokens request).
	MaxMessages int
	// MaxPartsPerMessage bounds the parts of one message.
	MaxPartsPerMessage int
	// MaxTools bounds the tool definitions of a state.
	MaxTools int
	// MaxMessageBytes is the transport's message limit; a request whose
	// system prompt template would expand past it is refused before the
	// expansion is built.
	MaxMessageBytes int
}

// DefaultLimits are the limits a server uses unless configured otherwise.
func DefaultLimits() Limits {
	return Limits{MaxMessages: 100_000, MaxPartsPerMessage: 1_000, MaxTools: 1_000, MaxMessageBytes: DefaultMaxMessageBytes}
}

// Config holds the use cases' dependencies.
type Config struct {
	Catalog  Catalog
	Counters TokenCounters
	// Limits default to DefaultLimits() when zero.
	Limits Limits
	// Logger receives the failures a call survives (a compaction at the end of
	// an execution); slog.Default() when nil.
	Logger *slog.Logger
	// Attachments keeps attached documents for later calls that name them by
	// id; nil keeps none (every id-only attachment is then unknown).
	Attachments AttachmentStore
	// Observer, when set, is told how every pipeline run ended (metrics).
	Observer RunObserver
}

// Service offers the use cases; it is safe for concurrent use.
type Service struct {
	catalog     Catalog
	counters    TokenCounters
	limits      Limits
	log         *slog.Logger
	attachments AttachmentStore
	observer    RunObserver
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.Catalog == nil || cfg.Counters == nil {
		return nil, errors.New("compiler: Config.Catalog and Config.Counters are required")
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	if cfg.Limits.MaxMessageBytes <= 0 {
		cfg.Limits.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{catalog: cfg.Catalog, counters: cfg.Counters, limits: cfg.Limits, log: cfg.Logger, attachments: cfg.Attachments, observer: cfg.Observer}, nil
}

// Limits are the limits the service was built with; the adapter checks the
// request's own fields against them.
func (s *Service) Limits() Limits { return s.limits }

// Profiles describes every profile, sorted by name.
func (s *Service) Profiles() []ProfileInfo { return s.catalog.Profiles() }

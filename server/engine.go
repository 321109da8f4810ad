package server

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/components"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/metrics"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/plan"
)

// Engine is the context compiler built from a Config without any server:
// the token service, the catalog of profiles, the summary cache and the
// state references. `ctxc compile`, `ctxc profiles` and `ctxc eval` run on
// one; a Go program can too, calling the API's methods directly.
type Engine struct {
	eng *engine
	log *slog.Logger
}

// NewEngine validates cfg and builds the engine from it, returning every
// problem of both at once (a bad setting, model registry entry, helper model,
// cache or profile). The tokenizers load on first use. Close it when done.
func NewEngine(cfg *Config) (*Engine, error) {
	problems := cfg.validate()
	log := cfg.logger()
	eng, err := newEngine(*cfg, cfg.tracerProvider(), log)
	if err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		if eng != nil {
			eng.close()
		}
		return nil, errors.Join(problems...)
	}
	return &Engine{eng: eng, log: log}, nil
}

// Service is the API (ctxc.v1.ContextCompilerService) over the engine, to
// call in process: the same handlers the gRPC server serves, without its
// transport (admission, authentication, deadlines).
func (e *Engine) Service() (ctxcv1.ContextCompilerServiceServer, error) {
	svc, err := e.eng.service(e.log)
	if err != nil {
		return nil, err
	}
	return svc, nil
}

// Close releases what the engine holds open (the Redis connection).
func (e *Engine) Close() { e.eng.close() }

// tracerProvider is the configured provider, or one that records nothing.
func (c *Config) tracerProvider() trace.TracerProvider {
	if c.TracerProvider != nil {
		return c.TracerProvider
	}
	return noop.NewTracerProvider()
}

// engine is what every command that runs profiles needs: the token service
// (tokenizers and model registry) and the catalog of built profiles.
type engine struct {
	tokens  *lazyTokens
	catalog *pipeline.Catalog
	cache   *summarycache.Cache
	// refs keeps the states calls name by reference.
	refs *stateref.Store
	// schedules is the schedule cache (nil when schedule_cache_bytes is 0).
	schedules *pipeline.ScheduleCache
	// helpers are the helper-model clients, for metrics.
	helpers []metrics.HelperModel
	// observer, when set, is told how every pipeline run ended (metrics).
	observer compiler.RunObserver
	// maxMessageBytes is the transport's message limit, which the service
	// also applies to what a request expands to.
	maxMessageBytes int
	// proxyEndpoints are the proxy's configured upstreams and their
	// endpoints, for metrics.
	proxyEndpoints map[string][]string
	// version is the build's, for metrics.
	version string
}

// policyDeps are what the LLM-assisted policies are built with, and the
// helper model clients again for metrics.
type policyDeps struct {
	components.Deps
	helpers []metrics.HelperModel
}

// newEngine checks the model registry, builds the helper model clients and
// the summary cache, and builds every profile. It goes on past a problem as
// far as it can, so that one run reports every problem of every part; the
// tokenizers load on first use.
func newEngine(cfg Config, tp trace.TracerProvider, log *slog.Logger) (*engine, error) {
	var problems []error
	models := make([]tokens.ModelEntry, len(cfg.ModelRegistry))
	for i, e := range cfg.ModelRegistry {
		models[i] = e.internal()
	}
	tok := &lazyTokens{cfg: tokens.ServiceConfig{CacheEntries: cfg.TokenCacheEntries, Models: models}}
	if err := tok.cfg.Validate(); err != nil {
		problems = append(problems, fmt.Errorf("model_registry: %w", err))
	}
	deps, err := newPolicyDeps(cfg, tp, tok, log)
	if err != nil {
		problems = append(problems, err)
	}
	reg, err := cfg.registry(components.Factories(deps.Deps))
	if err != nil {
		deps.Cache.Close()
		return nil, errors.Join(append(problems, err)...)
	}
	schedules := pipeline.NewScheduleCache(cfg.ScheduleCacheBytes)
	profiles := make([]pipeline.ProfileSpec, len(cfg.Profiles))
	for i, p := range cfg.Profiles {
		profiles[i] = p.internal()
	}
	cat, err := pipeline.NewCatalog(reg, tok, tp, pipeline.Config{DefaultProfile: cfg.DefaultProfile, Profiles: profiles, Source: cfg.Path,
		AttachmentPolicy: plan.PlacementType, ScheduleCache: schedules})
	if err != nil {
		// Its problems name their place: profiles[i] (name), default_profile.
		problems = append(problems, err)
	} else if err := cfg.checkProxyProfiles(func(name string) bool { _, err := cat.Profile(name); return err == nil }); err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		deps.Cache.Close()
		return nil, errors.Join(problems...)
	}
	// The summary cache's Redis, when it has one, is the state refs' too.
	refs, err := stateref.New(cfg.StateRefs.internal(), stateref.Redis{Client: deps.Cache.RedisClient(), Timeout: cfg.SummaryCache.RedisTimeout}, log)
	if err != nil { // validated with the config
		deps.Cache.Close()
		return nil, fmt.Errorf("state_refs: %w", err)
	}
	return &engine{tokens: tok, catalog: cat, cache: deps.Cache, refs: refs, schedules: schedules, helpers: deps.helpers, maxMessageBytes: cfg.MaxMessageBytes,
		proxyEndpoints: proxyEndpoints(cfg.Proxy), version: cmp.Or(cfg.Version, "dev")}, nil
}

// registry holds the built-in policies and the program's own
// (Config.Policies). An entry that is nil, has no type, a stage outside the
// stage table, or a type already taken is an error naming the entry, and
// for a taken type the factory that has it.
func (c *Config) registry(builtin []policies.Factory) (*policies.Registry, error) {
	owner := make(map[string]string, len(builtin)+len(c.Policies))
	for _, f := range builtin {
		owner[f.Type()] = fmt.Sprintf("the built-in policy %q (%T)", f.Type(), f)
	}
	all := slices.Clip(builtin)
	var problems []error
	for i, f := range c.Policies {
		where := fmt.Sprintf("Config.Policies[%d]", i)
		switch {
		case f == nil:
			problems = append(problems, fmt.Errorf("%s: the factory is nil", where))
		case f.Type() == "":
			problems = append(problems, fmt.Errorf("%s: the factory (%T) has an empty type", where, f))
		case owner[f.Type()] != "":
			problems = append(problems, fmt.Errorf("%s: policy type %q of %T is taken by %s", where, f.Type(), f, owner[f.Type()]))
		case !slices.ContainsFunc(policies.Stages(), func(s policies.StageInfo) bool { return s.Stage == f.Stage() }):
			problems = append(problems, fmt.Errorf("%s: policy type %q has %s, not a stage of the stage table (%s)", where, f.Type(), f.Stage(), policies.StageOrder()))
		default:
			owner[f.Type()] = fmt.Sprintf("%s (%T)", where, f)
			all = append(all, f)
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return policies.NewRegistry(all...)
}

// newPolicyDeps builds what the LLM-assisted policies need: the helper model
// clients (none when not configured: the policies then fall back to their
// deterministic forms), the summary cache, and prices from the model registry.
// It reports every problem but always returns a usable cache (the in-memory
// default when summary_cache is wrong), so that the profiles can be checked.
func newPolicyDeps(cfg Config, tp trace.TracerProvider, tok *lazyTokens, log *slog.Logger) (policyDeps, error) {
	deps := policyDeps{Deps: components.Deps{Outputs: diagnose.NewCache()}}
	var problems []error
	breakers := llm.NewBreakers() // shared, so models on one endpoint share its breaker
	models := cfg.Models.internal()
	for _, m := range []struct {
		task string
		cfg  *llm.Config
		dest *llm.Completer
	}{{"planner", models.Planner, &deps.Planner}, {"summarizer", models.Summarizer, &deps.Summarizer}} {
		if m.cfg == nil {
			continue
		}
		client, err := llm.New(*m.cfg, llm.Options{TracerProvider: tp, Breakers: breakers, Logger: log})
		if err != nil {
			problems = append(problems, fmt.Errorf("models.%s: %w", m.task, err))
			continue
		}
		*m.dest = client
		deps.helpers = append(deps.helpers, metrics.HelperModel{Task: m.task, Client: client})
	}
	cache, err := summarycache.New(cfg.SummaryCache.internal(), log)
	if err != nil {
		problems = append(problems, fmt.Errorf("summary_cache: %w", err))
		cache, _ = summarycache.New(summarycache.DefaultConfig(), log)
	}
	deps.Cache = cache
	deps.Prices = func(model string) (float64, float64, bool) {
		info, _, err := tok.Resolve(agentstate.ModelSpec{Name: model})
		if err != nil || (info.InputPricePerMTok == 0 && info.OutputPricePerMTok == 0) {
			return 0, 0, false
		}
		return info.InputPricePerMTok, info.OutputPricePerMTok, true
	}
	return deps, errors.Join(problems...)
}

// close releases what the engine holds open (the Redis connection).
func (e *engine) close() {
	e.refs.Close()
	if e.cache != nil {
		e.cache.Close()
	}
}

// service is the gRPC service over the use cases over the engine.
func (e *engine) service(log *slog.Logger) (*adapter.Service, error) {
	limits := compiler.DefaultLimits()
	limits.MaxMessageBytes = e.maxMessageBytes
	app, err := compiler.New(compiler.Config{Catalog: e.catalog, Counters: e.tokens, Limits: limits, Logger: log, Attachments: e.cache, Observer: e.observer})
	if err != nil {
		return nil, err
	}
	return adapter.New(adapter.Config{Compiler: app, Logger: log, StateRefs: e.refs})
}

package tokens

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// DefaultCacheEntries bounds the token-count cache: at about 100 bytes per
// entry with map overhead, 200,000 counts take roughly 20 MB.
const DefaultCacheEntries = 200_000

// ServiceConfig configures the token service (the config file's
// token_cache_entries and model_registry).
type ServiceConfig struct {
	// CacheEntries bounds the token-count cache; 0 disables caching.
	CacheEntries int `yaml:"cache_entries" json:"cache_entries"`
	// Models extend or override the built-in registry (models.yaml): an entry
	// with a built-in entry's name and prefix flag replaces the fields it
	// sets; any other entry is added and must be complete.
	Models []ModelEntry `yaml:"models" json:"models"`
}

// DefaultServiceConfig returns the defaults: a cache of DefaultCacheEntries
// and the built-in models only.
func DefaultServiceConfig() ServiceConfig {
	return ServiceConfig{CacheEntries: DefaultCacheEntries}
}

// Validate reports every problem of the config, including those of the
// registry the model entries make.
func (c *ServiceConfig) Validate() error {
	var errs []error
	if c.CacheEntries < 0 {
		errs = append(errs, fmt.Errorf("cache_entries must not be negative, got %d", c.CacheEntries))
	}
	for i := range c.Models {
		if strings.TrimSpace(c.Models[i].Name) == "" {
			errs = append(errs, fmt.Errorf("models[%d]: name is empty", i))
		}
	}
	builtin, err := builtinModels()
	if err != nil {
		errs = append(errs, err)
	} else if _, err := newRegistry(builtin, c.Models); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Service resolves models to counters. It holds the encoders (built once),
// the registry and the shared count cache; it is safe for concurrent use.
type Service struct {
	encoders map[string]*encoder
	cache    *countCache
	seed     maphash.Seed
	xseed    uint64
	registry *registry
}

// NewService validates cfg and builds every encoder once from the embedded
// BPE data; it never touches the network.
func NewService(cfg ServiceConfig) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	builtin, err := builtinModels()
	if err != nil {
		return nil, err
	}
	reg, err := newRegistry(builtin, cfg.Models)
	if err != nil {
		return nil, err
	}
	encoders, err := buildEncoders()
	if err != nil {
		return nil, err
	}
	seed := maphash.MakeSeed()
	return &Service{encoders: encoders, cache: newCountCache(cfg.CacheEntries), seed: seed,
		xseed: maphash.String(seed, "xxh3 seed"), registry: reg}, nil
}

// Preload builds every encoding's table now, rather than on first use: a
// server does it before it reports SERVING, so that no call pays for it.
func (s *Service) Preload() error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.encoders)) {
		errs = append(errs, s.encoders[name].ready())
	}
	return errors.Join(errs...)
}

// Resolve finds the model of spec in the registry, applies the request's
// overrides (window, max output) and returns the model and its counter. A
// registered model is counted as its own provider's, whatever provider the
// request names.
//
// A model the registry lacks works with no configuration when its provider is
// known: spec.Provider, else the provider its name is recognizably from
// (models.yaml, provider_defaults). It gets that provider's default window,
// output reservation and estimator (a calibrated count: an estimate), its
// counter's name ends in "(<provider> default)", and ModelInfo.Assumption
// says what was assumed. Without a known provider it is accepted only when
// the request gives a window: counted as cl100k_base times the default
// factor. Either way a window given in the request caps max output at
// min(4096, window/4) unless max output is given too. Otherwise the error is
// a *agentstate.UnknownModelError.
func (s *Service) Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error) {
	window := 0
	if spec.ContextWindowTokens != nil {
		window = int(*spec.ContextWindowTokens)
	}
	entry, registered := s.registry.lookup(spec.Name)
	assumed := ""
	if !registered {
		provider := strings.ToLower(spec.Provider)
		if provider == "" {
			provider = s.registry.recognize(spec.Name)
		}
		fallback, known := s.registry.providerDefault(provider)
		switch {
		case known:
			entry, assumed = fallback, provider
		case window > 0:
			if provider == "" {
				provider = "unknown"
			}
			entry = ModelEntry{Provider: provider, Encoding: EncodingCL100K, Estimator: EstimatorCalibrated}
		default:
			return agentstate.ModelInfo{}, nil, &agentstate.UnknownModelError{Field: "state.model.name", Model: spec.Name}
		}
		entry.Name = spec.Name
		if window > 0 {
			entry.MaxOutputTokens = min(4096, window/4)
		}
	}
	info := agentstate.ModelInfo{
		Name:               spec.Name,
		Provider:           entry.Provider,
		ContextWindow:      entry.ContextWindow,
		MaxOutputTokens:    entry.MaxOutputTokens,
		InputPricePerMTok:  entry.InputPricePerMTok,
		OutputPricePerMTok: entry.OutputPricePerMTok,
	}
	if spec.Provider != "" {
		info.Provider = strings.ToLower(spec.Provider)
	}
	if window > 0 {
		info.ContextWindow = window
	}
	if spec.MaxOutputTokens != nil && *spec.MaxOutputTokens > 0 {
		info.MaxOutputTokens = int(*spec.MaxOutputTokens)
	}
	// The tokenizer and its calibration belong to the model: a Claude model is
	// counted as Anthropic's even in a state that names another provider.
	countAs := entry.Provider
	if countAs == "" {
		countAs = info.Provider
	}
	c := newCounter(s, entry.Estimator, entry.Encoding, entry.Factor, countAs)
	if assumed != "" {
		info.Assumption = fmt.Sprintf("model %q is not in the model registry: counted with provider %s's defaults (%s, an estimate)", spec.Name, assumed, c.name)
		c.name += " (" + assumed + " default)"
		if window == 0 {
			info.Assumption += fmt.Sprintf(", in the provider's default window of %d tokens with %d reserved for output; "+
				"add the model to the config file's model_registry, or give state.model.context_window_token_count, for its own figures", info.ContextWindow, info.MaxOutputTokens)
		}
	}
	return info, c, nil
}

// ProviderOf names the provider a model belongs to: its registry entry's,
// else the provider its name is recognizably from (models.yaml,
// provider_defaults); "" when neither says. The state's provider lock uses
// it for states and calls that name a model but no provider.
func (s *Service) ProviderOf(model string) string { return s.registry.providerOf(model) }

// CounterForEncoding returns an exact counter for a named encoding (for
// CountTokens by encoding). Images cost the OpenAI figure.
func (s *Service) CounterForEncoding(name string) (agentstate.TokenCounter, error) {
	if _, ok := s.encoders[name]; !ok {
		known := strings.Join(KnownEncodings(), ", ")
		return nil, &agentstate.InvalidArgumentError{
			Reason: agentstate.ReasonUnknownEncoding,
			Violations: []agentstate.FieldViolation{{
				Field:       "encoding",
				Description: fmt.Sprintf("unknown encoding %q; known encodings: %s", name, known),
			}},
			Metadata: map[string]string{"encoding": name, "known_encodings": known},
		}
	}
	return newCounter(s, EstimatorExact, name, 1, "openai"), nil
}

// CacheStats are the token-count cache's lookups since start and its size.
type CacheStats struct {
	// Hits are counts served from the cache; Misses, counts tokenized
	// because the cache did not hold them.
	Hits, Misses uint64
	// Entries is how many counts it holds, of at most Capacity.
	Entries, Capacity int
}

// CacheStats returns the count cache's counters; zero when caching is off.
func (s *Service) CacheStats() CacheStats {
	if s.cache == nil {
		return CacheStats{}
	}
	return s.cache.stats()
}

// Models lists the registry after config overrides, in definition order.
func (s *Service) Models() []ModelEntry {
	return append([]ModelEntry(nil), s.registry.entries...)
}

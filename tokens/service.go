package tokens

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
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

// Resolve finds the model of spec in the registry, applies the request's
// overrides (window, max output) and returns the model and its counter. An
// unknown model is accepted when the request gives a window: it is counted
// as cl100k_base (o200k_base for provider openai) times its provider's
// factor, with max output min(4096, window/4) unless given. Otherwise the
// error is a *policies.UnknownModelError.
func (s *Service) Resolve(spec policies.ModelSpec) (policies.ModelInfo, policies.TokenCounter, error) {
	window := 0
	if spec.ContextWindowTokens != nil {
		window = int(*spec.ContextWindowTokens)
	}
	entry, ok := s.registry.lookup(spec.Name)
	if !ok {
		if window <= 0 {
			return policies.ModelInfo{}, nil, &policies.UnknownModelError{Field: "state.model.name", Model: spec.Name}
		}
		provider := strings.ToLower(spec.Provider)
		if provider == "" {
			provider = "unknown"
		}
		entry = ModelEntry{Name: spec.Name, Provider: provider, Encoding: EncodingCL100K, Estimator: EstimatorCalibrated, Factor: providerFactor(provider)}
		if provider == "openai" {
			entry.Encoding, entry.Factor = EncodingO200K, 1
		}
		entry.MaxOutputTokens = min(4096, window/4)
	}
	info := policies.ModelInfo{
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
	return info, newCounter(s, entry.Estimator, entry.Encoding, entry.Factor, info.Provider), nil
}

// CounterForEncoding returns an exact counter for a named encoding (for
// CountTokens by encoding). Images cost the OpenAI figure.
func (s *Service) CounterForEncoding(name string) (policies.TokenCounter, error) {
	if _, ok := s.encoders[name]; !ok {
		known := strings.Join(KnownEncodings(), ", ")
		return nil, &policies.InvalidArgumentError{
			Reason: policies.ReasonUnknownEncoding,
			Violations: []policies.FieldViolation{{
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

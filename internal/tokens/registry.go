package tokens

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Estimators.
const (
	// EstimatorExact counts with the model's own tiktoken encoding.
	EstimatorExact = "exact"
	// EstimatorCalibrated scales a tiktoken count by a per-model or
	// per-provider factor (see calibration.go).
	EstimatorCalibrated = "calibrated"
	// EstimatorChars counts UTF-8 bytes / 4.
	EstimatorChars = "chars"
)

//go:embed models.yaml
var builtinModelsYAML []byte

// ModelEntry is one registry row: a model name (or name prefix) and what ctxc
// knows of it.
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

// validate reports the problems of a complete entry (after overrides).
func (e *ModelEntry) validate(where string) error {
	var errs []error
	if e.Name == "" {
		errs = append(errs, fmt.Errorf("%s: name is empty", where))
	}
	switch e.Estimator {
	case EstimatorExact, EstimatorCalibrated:
		if !knownEncoding(e.Encoding) {
			errs = append(errs, fmt.Errorf("%s: encoding %q unknown (known: %s)", where, e.Encoding, strings.Join(KnownEncodings(), ", ")))
		}
	case EstimatorChars:
		if e.Encoding != "" && !knownEncoding(e.Encoding) {
			errs = append(errs, fmt.Errorf("%s: encoding %q unknown (known: %s)", where, e.Encoding, strings.Join(KnownEncodings(), ", ")))
		}
	default:
		errs = append(errs, fmt.Errorf("%s: estimator %q unknown (known: exact, calibrated, chars)", where, e.Estimator))
	}
	if e.Factor < 0 || e.Factor > 10 {
		errs = append(errs, fmt.Errorf("%s: factor %v outside [0, 10]", where, e.Factor))
	}
	if e.ContextWindow <= 0 {
		errs = append(errs, fmt.Errorf("%s: context_window must be positive", where))
	}
	if e.MaxOutputTokens < 0 {
		errs = append(errs, fmt.Errorf("%s: max_output_tokens must not be negative", where))
	}
	if e.InputPricePerMTok < 0 || e.OutputPricePerMTok < 0 {
		errs = append(errs, fmt.Errorf("%s: prices must not be negative", where))
	}
	return errors.Join(errs...)
}

// overlay sets the fields of o that are set over e.
func (e *ModelEntry) overlay(o *ModelEntry) {
	if o.Provider != "" {
		e.Provider = o.Provider
	}
	if o.Encoding != "" {
		e.Encoding = o.Encoding
	}
	if o.Estimator != "" {
		e.Estimator = o.Estimator
	}
	if o.Factor != 0 {
		e.Factor = o.Factor
	}
	if o.ContextWindow != 0 {
		e.ContextWindow = o.ContextWindow
	}
	if o.MaxOutputTokens != 0 {
		e.MaxOutputTokens = o.MaxOutputTokens
	}
	if o.InputPricePerMTok != 0 {
		e.InputPricePerMTok = o.InputPricePerMTok
	}
	if o.OutputPricePerMTok != 0 {
		e.OutputPricePerMTok = o.OutputPricePerMTok
	}
}

// ProviderDefault is what ctxc assumes for a model the registry lacks when
// the request names its provider or the name is recognizably the provider's
// (models.yaml, provider_defaults).
type ProviderDefault struct {
	// Entry holds the provider and the encoding, estimator, factor, window and
	// output reservation assumed; its Name is unused.
	Entry ModelEntry `yaml:",inline"`
	// NamePrefixes are the model name prefixes that name this provider's
	// models ("gpt-", "claude-").
	NamePrefixes []string `yaml:"name_prefixes"`
}

// builtinRegistry is the embedded models.yaml.
type builtinRegistry struct {
	Models   []ModelEntry      `yaml:"models"`
	Defaults []ProviderDefault `yaml:"provider_defaults"`
}

// registry looks models up: exact names first, then the longest prefix.
type registry struct {
	entries  []ModelEntry // in listing order
	exact    map[string]int
	prefixes []int // indexes into entries, longest name first

	defaults map[string]ModelEntry // by provider
	// namePrefixes recognize a provider's model names, longest first.
	namePrefixes []namePrefix
}

type namePrefix struct{ prefix, provider string }

// builtinModels is the embedded models.yaml, parsed once per process: the
// engine validates its model_registry against it and the token service then
// builds its registry from it, and each parse took ~3.5 ms of a start-up
// that must reach SERVING within 50 ms (docs/performance.md). Callers only
// read it.
var builtinModels = sync.OnceValues(parseBuiltinModels)

func parseBuiltinModels() (builtinRegistry, error) {
	var doc builtinRegistry
	if err := yaml.Unmarshal(builtinModelsYAML, &doc); err != nil {
		return builtinRegistry{}, fmt.Errorf("embedded models.yaml: %w", err)
	}
	return doc, nil
}

// newRegistry merges overrides over the built-in entries: an override with
// the name and prefix flag of a built-in entry replaces the fields it sets;
// any other override is a new entry and must be complete.
func newRegistry(builtin builtinRegistry, overrides []ModelEntry) (*registry, error) {
	r := &registry{exact: make(map[string]int), defaults: make(map[string]ModelEntry)}
	index := make(map[ModelEntry]int) // key: only Name and Prefix set
	key := func(e *ModelEntry) ModelEntry { return ModelEntry{Name: strings.ToLower(e.Name), Prefix: e.Prefix} }
	add := func(e ModelEntry) {
		e.Name = strings.ToLower(e.Name)
		if i, ok := index[key(&e)]; ok {
			r.entries[i].overlay(&e)
			return
		}
		index[key(&e)] = len(r.entries)
		r.entries = append(r.entries, e)
	}
	for _, e := range builtin.Models {
		add(e)
	}
	for _, e := range overrides {
		add(e)
	}
	var errs []error
	for i := range r.entries {
		e := &r.entries[i]
		if err := e.validate(fmt.Sprintf("model %q", e.Name)); err != nil {
			errs = append(errs, err)
		}
		if e.Prefix {
			r.prefixes = append(r.prefixes, i)
		} else {
			r.exact[e.Name] = i
		}
	}
	for i, d := range builtin.Defaults {
		e := d.Entry
		e.Name = e.Provider + " default"
		where := fmt.Sprintf("provider_defaults[%d] (%s)", i, e.Provider)
		if e.Provider == "" {
			errs = append(errs, fmt.Errorf("%s: provider is empty", where))
			continue
		}
		if err := e.validate(where); err != nil {
			errs = append(errs, err)
			continue
		}
		r.defaults[e.Provider] = e
		for _, p := range d.NamePrefixes {
			r.namePrefixes = append(r.namePrefixes, namePrefix{prefix: strings.ToLower(p), provider: e.Provider})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.SliceStable(r.prefixes, func(a, b int) bool {
		return len(r.entries[r.prefixes[a]].Name) > len(r.entries[r.prefixes[b]].Name)
	})
	sort.SliceStable(r.namePrefixes, func(a, b int) bool { return len(r.namePrefixes[a].prefix) > len(r.namePrefixes[b].prefix) })
	return r, nil
}

// lookup finds a model by name: exact, then longest prefix; then the same
// for the name without a "provider/" qualifier.
func (r *registry) lookup(name string) (ModelEntry, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return ModelEntry{}, false
	}
	if e, ok := r.lookupOne(name); ok {
		return e, true
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i+1 < len(name) {
		return r.lookupOne(name[i+1:])
	}
	return ModelEntry{}, false
}

func (r *registry) lookupOne(name string) (ModelEntry, bool) {
	if i, ok := r.exact[name]; ok {
		return r.entries[i], true
	}
	for _, i := range r.prefixes {
		if strings.HasPrefix(name, r.entries[i].Name) {
			return r.entries[i], true
		}
	}
	return ModelEntry{}, false
}

// providerOf names the provider of a model: its registry entry's, else the
// provider its name is recognizably from (recognize); "" when neither says.
func (r *registry) providerOf(name string) string {
	if e, ok := r.lookup(name); ok && e.Provider != "" {
		return e.Provider
	}
	return r.recognize(name)
}

// recognize names the provider a model name the registry lacks belongs to:
// a "provider/" qualifier naming a provider with defaults, else the longest
// provider name prefix the name, or its part after the last "/", starts with.
func (r *registry) recognize(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	base := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		qualifier, _, _ := strings.Cut(name, "/")
		if _, ok := r.defaults[qualifier]; ok {
			return qualifier
		}
		base = name[i+1:]
	}
	for _, p := range r.namePrefixes {
		if strings.HasPrefix(base, p.prefix) {
			return p.provider
		}
	}
	return ""
}

// providerDefault is the entry assumed for an unregistered model of provider.
func (r *registry) providerDefault(provider string) (ModelEntry, bool) {
	e, ok := r.defaults[strings.ToLower(provider)]
	return e, ok
}

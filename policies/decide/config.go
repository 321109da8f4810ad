package decide

import (
	"encoding/json"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/internal/bounds"
	"github.com/contextcompiler/ctxc/internal/yamlkeys"
)

// DefaultTargetRatio is the share of the trigger point that compaction aims
// at, as a token-limit compactor does (TargetTokens = 75% of MaxTokens).
const DefaultTargetRatio = 0.75

// ThresholdConfig is the "threshold" trigger's settings.
type ThresholdConfig struct {
	// Ratio, when set, fires when used >= Ratio * the usable window (context
	// window minus reserved output) instead of using the budget's soft
	// threshold. In (0, 1]. Default unset. Either way the trigger also fires
	// when fewer tokens remain than the token_budget's min_headroom_tokens.
	Ratio *float64 `yaml:"ratio" json:"ratio,omitempty"`
	// TargetRatio is the share of the trigger point compaction aims at. In (0, 1].
	// Default 0.75.
	TargetRatio float64 `yaml:"target_ratio" json:"target_ratio"`
}

// Validate reports every problem of the config.
func (c *ThresholdConfig) Validate() error {
	var ratio error
	if c.Ratio != nil {
		ratio = bounds.LeftOpen("ratio", *c.Ratio, 0, 1)
	}
	return errors.Join(ratio, bounds.LeftOpen("target_ratio", c.TargetRatio, 0, 1))
}

// HeadroomConfig is the "headroom" trigger's settings.
type HeadroomConfig struct {
	// MinHeadroomTokens fires when the budget's remaining tokens drop below it.
	// Must be positive. Default 8000.
	MinHeadroomTokens int `yaml:"min_headroom_tokens" json:"min_headroom_tokens"`
	// TargetRatio is the share of the trigger point (the used count at which the
	// remaining tokens reach MinHeadroomTokens) compaction aims at. In (0, 1].
	// Default 0.75.
	TargetRatio float64 `yaml:"target_ratio" json:"target_ratio"`
}

// Validate reports every problem of the config.
func (c *HeadroomConfig) Validate() error {
	return errors.Join(
		bounds.Positive("min_headroom_tokens", c.MinHeadroomTokens),
		bounds.LeftOpen("target_ratio", c.TargetRatio, 0, 1),
	)
}

// MessageCountConfig is the "message_count" trigger's settings.
type MessageCountConfig struct {
	// MaxMessages fires when the view holds more entries than this. Must be
	// positive. Default 200.
	MaxMessages int `yaml:"max_messages" json:"max_messages"`
	// TargetRatio is the share of the used tokens at the time of the trigger
	// compaction aims at (a message count has no token trigger point). In (0, 1].
	// Default 0.75.
	TargetRatio float64 `yaml:"target_ratio" json:"target_ratio"`
}

// Validate reports every problem of the config.
func (c *MessageCountConfig) Validate() error {
	return errors.Join(
		bounds.Positive("max_messages", c.MaxMessages),
		bounds.LeftOpen("target_ratio", c.TargetRatio, 0, 1),
	)
}

// Composite modes.
const (
	// ModeAny fires when at least one nested trigger fires.
	ModeAny = "any"
	// ModeAll fires when every nested trigger fires.
	ModeAll = "all"
)

// CompositeConfig is the "composite" trigger's settings:
//
//	mode: any
//	triggers:
//	  - type: threshold
//	    settings: {ratio: 0.8}
//	  - type: message_count
//	    settings: {max_messages: 200}
//
// The compaction target is the smallest target of the nested triggers that fired.
type CompositeConfig struct {
	// Mode is "any" or "all". Default "any".
	Mode string `yaml:"mode" json:"mode"`
	// Triggers are the nested triggers: threshold, headroom, message_count or
	// composite. At least one. Default: threshold with its defaults.
	Triggers []TriggerSpec `yaml:"triggers" json:"triggers"`
}

// TriggerSpec is one nested trigger of a composite.
type TriggerSpec struct {
	// Type is the nested trigger's policy type.
	Type string `yaml:"type" json:"type"`
	// Settings are decoded over the type's defaults; unknown keys are errors.
	Settings yaml.Node `yaml:"settings" json:"-"`
}

// MarshalJSON shows the nested trigger with its effective settings.
func (s TriggerSpec) MarshalJSON() ([]byte, error) {
	out := struct {
		Type     string `json:"type"`
		Settings any    `json:"settings,omitempty"`
	}{Type: s.Type}
	if cfg, err := s.config(); err == nil {
		out.Settings = cfg
	}
	return json.Marshal(out)
}

// config decodes the spec's settings over its type's defaults.
func (s TriggerSpec) config() (triggerConfig, error) {
	f, ok := triggerFactory(s.Type)
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s, %s, %s, %s)", errUnknown, s.Type, TypeThreshold, TypeHeadroom, TypeMessageCount, TypeComposite)
	}
	cfg := f.CreateDefaultConfig().(triggerConfig)
	if s.Settings.IsZero() {
		return cfg, nil
	}
	if err := yamlkeys.Decode(&s.Settings, cfg, "settings"); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Validate reports every problem of the config, nested ones with their field path.
func (c *CompositeConfig) Validate() error {
	var errs []error
	if c.Mode != ModeAny && c.Mode != ModeAll {
		errs = append(errs, fmt.Errorf("mode: %q must be %q or %q", c.Mode, ModeAny, ModeAll))
	}
	if len(c.Triggers) == 0 {
		errs = append(errs, errors.New("triggers: at least one trigger is required"))
	}
	for i, t := range c.Triggers {
		path := fmt.Sprintf("triggers[%d]", i)
		cfg, err := t.config()
		if err != nil {
			if errors.Is(err, errUnknown) {
				errs = append(errs, fmt.Errorf("%s.type: %w", path, err))
			} else {
				for _, e := range flatten(err) {
					errs = append(errs, fmt.Errorf("%s: %w", path, e))
				}
			}
			continue
		}
		for _, e := range flatten(cfg.Validate()) {
			errs = append(errs, fmt.Errorf("%s.settings.%w", path, e))
		}
	}
	return errors.Join(errs...)
}

var errUnknown = errors.New("unknown trigger type")

// flatten splits joined errors into their leaves.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

package decide

import (
	"fmt"
	"reflect"

	"github.com/contextcompiler/ctxc/policies"
)

// Policy types.
const (
	TypeThreshold    = "threshold"
	TypeHeadroom     = "headroom"
	TypeMessageCount = "message_count"
	TypeComposite    = "composite"
)

// triggerConfig is a trigger's config that can build the trigger.
type triggerConfig interface {
	policies.Config
	trigger() trigger
}

func (c *ThresholdConfig) trigger() trigger    { return thresholdTrigger{cfg: *c} }
func (c *HeadroomConfig) trigger() trigger     { return headroomTrigger{cfg: *c} }
func (c *MessageCountConfig) trigger() trigger { return messageCountTrigger{cfg: *c} }
func (c *CompositeConfig) trigger() trigger {
	t := compositeTrigger{all: c.Mode == ModeAll}
	for _, s := range c.Triggers {
		cfg, err := s.config()
		if err != nil {
			continue // Validate reported it; Create refuses invalid configs
		}
		t.triggers = append(t.triggers, cfg.trigger())
	}
	return t
}

type factory struct {
	typ        string
	newDefault func() triggerConfig
}

// NewThresholdFactory returns the factory of "threshold": compact when the
// budget is over its soft threshold, or used >= ratio * the usable window.
func NewThresholdFactory() policies.Factory {
	return factory{typ: TypeThreshold, newDefault: func() triggerConfig {
		return &ThresholdConfig{TargetRatio: DefaultTargetRatio}
	}}
}

// NewHeadroomFactory returns the factory of "headroom": compact when fewer than
// min_headroom_tokens remain.
func NewHeadroomFactory() policies.Factory {
	return factory{typ: TypeHeadroom, newDefault: func() triggerConfig {
		return &HeadroomConfig{MinHeadroomTokens: 8000, TargetRatio: DefaultTargetRatio}
	}}
}

// NewMessageCountFactory returns the factory of "message_count": compact when
// the view holds more than max_messages entries.
func NewMessageCountFactory() policies.Factory {
	return factory{typ: TypeMessageCount, newDefault: func() triggerConfig {
		return &MessageCountConfig{MaxMessages: 200, TargetRatio: DefaultTargetRatio}
	}}
}

// NewCompositeFactory returns the factory of "composite": any or all of a list
// of nested triggers.
func NewCompositeFactory() policies.Factory {
	return factory{typ: TypeComposite, newDefault: func() triggerConfig {
		return &CompositeConfig{Mode: ModeAny, Triggers: []TriggerSpec{{Type: TypeThreshold}}}
	}}
}

// triggerFactory returns the factory of a nested trigger type.
func triggerFactory(typ string) (factory, bool) {
	switch typ {
	case TypeThreshold:
		return NewThresholdFactory().(factory), true
	case TypeHeadroom:
		return NewHeadroomFactory().(factory), true
	case TypeMessageCount:
		return NewMessageCountFactory().(factory), true
	case TypeComposite:
		return NewCompositeFactory().(factory), true
	}
	return factory{}, false
}

func (f factory) Type() string                         { return f.typ }
func (f factory) Stage() policies.Stage                { return policies.StageDecide }
func (f factory) CreateDefaultConfig() policies.Config { return f.newDefault() }

func (f factory) Create(cfg policies.Config) (policies.Policy, error) {
	want := f.newDefault()
	c, ok := cfg.(triggerConfig)
	if !ok || reflect.TypeOf(c) != reflect.TypeOf(want) {
		return nil, fmt.Errorf("%s: config is %T, want %T", f.typ, cfg, want)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.typ, err)
	}
	return decider{trigger: c.trigger()}, nil
}

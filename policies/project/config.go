package project

import (
	"errors"
	"fmt"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// View names accepted in the config.
const (
	ViewReasoning    = "reasoning"
	ViewConversation = "conversation"
)

// Config is the project policy's settings.
type Config struct {
	// View is the default projection: "reasoning" (the conversation plus the tool
	// trace) or "conversation" (user messages, final answers, events and
	// summaries). A request's Options.View overrides it. Default "reasoning".
	View string `yaml:"view" json:"view"`
}

// Validate reports every problem of the config.
func (c *Config) Validate() error {
	var errs []error
	if c.View != ViewReasoning && c.View != ViewConversation {
		errs = append(errs, fmt.Errorf("view: %q is not %q or %q", c.View, ViewReasoning, ViewConversation))
	}
	return errors.Join(errs...)
}

func (c *Config) view() agentstate.View {
	if c.View == ViewConversation {
		return agentstate.ViewConversation
	}
	return agentstate.ViewReasoning
}

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// fakeConfig is the settings of every fake policy.
type fakeConfig struct {
	// Drop removes the oldest unprotected entry when set (a shrinking transform).
	Drop bool `yaml:"drop" json:"drop"`
	// Grow appends text to the last unprotected entry (a transform that does not shrink).
	Grow bool `yaml:"grow" json:"grow"`
	// DropPinned removes pinned entries (a buggy policy).
	DropPinned bool `yaml:"drop_pinned" json:"drop_pinned"`
	// Duplicate shows the entry of u2 twice (a buggy policy).
	Duplicate bool `yaml:"duplicate" json:"duplicate,omitempty"`
	// Impostor adds a summary whose id is that of log message u2 (a buggy policy).
	Impostor bool `yaml:"impostor" json:"impostor,omitempty"`
	// RewriteFirst changes the text of the first task (a buggy policy).
	RewriteFirst bool `yaml:"rewrite_first" json:"rewrite_first,omitempty"`
	// Request sets Decision.Compact (a trigger).
	Request bool `yaml:"request" json:"request"`
	// Limit must not be negative.
	Limit int `yaml:"limit" json:"limit"`
	// Fail makes Apply return an error.
	Fail string `yaml:"fail" json:"fail"`
	// Mode and Triggers accept the built-in composite trigger's settings.
	Mode     string `yaml:"mode" json:"-"`
	Triggers []any  `yaml:"triggers" json:"-"`
}

func (c *fakeConfig) Validate() error {
	var errs []error
	if c.Limit < 0 {
		errs = append(errs, fmt.Errorf("limit: %d must not be negative", c.Limit))
	}
	if c.Drop && c.Grow {
		errs = append(errs, errors.New("drop and grow are exclusive"))
	}
	return errors.Join(errs...)
}

type fakeFactory struct {
	typ    string
	stage  policies.Stage
	repair bool
}

func (f fakeFactory) Type() string                         { return f.typ }
func (f fakeFactory) Stage() policies.Stage                { return f.stage }
func (f fakeFactory) CreateDefaultConfig() policies.Config { return &fakeConfig{} }
func (f fakeFactory) Create(cfg policies.Config) (policies.Policy, error) {
	p := &fakePolicy{typ: f.typ, stage: f.stage, cfg: *cfg.(*fakeConfig)}
	if f.repair {
		return repairPolicy{p}, nil
	}
	return p, nil
}

type repairPolicy struct{ *fakePolicy }

func (repairPolicy) RepairPass() {}

type fakePolicy struct {
	typ   string
	stage policies.Stage
	cfg   fakeConfig
}

func (p *fakePolicy) Apply(_ context.Context, w *policies.Work) error {
	if p.cfg.Fail != "" {
		return errors.New(p.cfg.Fail)
	}
	switch p.stage {
	case policies.StageEstimate:
		sys, tools := w.Counter().CountPreamble(&w.State().Context)
		w.SystemTokens, w.ToolTokens = sys, tools
		for i := range w.Entries {
			e := &w.Entries[i]
			e.Tokens, e.Provenance = w.Counter().CountMessage(&e.Message)
			e.Counted = true
		}
	case policies.StageBudget:
		used := w.UsedTokens()
		reserved := w.Model().MaxOutputTokens
		w.Budget = &agentstate.Budget{
			ContextWindow: w.Model().ContextWindow, Used: used, ReservedOutput: reserved,
			SoftThreshold: (w.Model().ContextWindow - reserved) * 8 / 10,
			Remaining:     max(0, w.Model().ContextWindow-used-reserved),
		}
	case policies.StageDecide:
		if p.cfg.Request {
			w.Decision.Compact = true
			w.Decision.Reason = "fake trigger"
		}
	}
	if p.cfg.Drop {
		prot := policies.Protection(w)
		for _, u := range policies.Units(w.Entries) {
			if !prot[u.Start] {
				for i := u.Start; i < u.End; i++ {
					w.Dispose(policies.MessageReport{MessageID: w.Entries[i].SourceID, Disposition: policies.DispositionDropped, Policy: p.typ})
				}
				w.Entries = append(w.Entries[:u.Start:u.Start], w.Entries[u.End:]...)
				break
			}
		}
	}
	if p.cfg.Grow {
		prot := policies.Protection(w)
		for i := len(w.Entries) - 1; i >= 0; i-- {
			if !prot[i] && w.Entries[i].Message.Role == agentstate.RoleUser {
				m := w.Entries[i].Message
				m.Parts = append([]agentstate.Part{agentstate.TextPart(strings.Repeat("more ", 50))}, m.Parts...)
				w.Entries[i].Message = m
				w.Touch(i)
				break
			}
		}
	}
	for i := range w.Entries {
		switch id := w.Entries[i].Message.ID; {
		case id == "u2" && p.cfg.Duplicate:
			w.Entries = append(w.Entries, w.Entries[i])
		case id == "u2" && p.cfg.Impostor:
			w.Entries = append(w.Entries, agentstate.Entry{Message: agentstate.Message{ID: id, Role: agentstate.RoleUser, Kind: agentstate.KindSummary,
				Parts: []agentstate.Part{agentstate.TextPart("a summary")}}})
		case id == "u1" && p.cfg.RewriteFirst:
			w.Entries[i].Message.Parts = []agentstate.Part{agentstate.TextPart("another task")}
			w.Touch(i)
		}
	}
	if p.cfg.DropPinned {
		kept := w.Entries[:0:0]
		for _, e := range w.Entries {
			if !e.Message.Pinned {
				kept = append(kept, e)
			}
		}
		w.Entries = kept
	}
	return nil
}

// fakeCounter counts one token per 4 bytes of text, rounded up, plus 3 per message.
type fakeCounter struct{}

func (fakeCounter) CountText(s string) int { return (len(s) + 3) / 4 }
func (c fakeCounter) CountMessage(m *agentstate.Message) (int, agentstate.Provenance) {
	n := 3
	for _, p := range m.Parts {
		n += c.CountText(p.Text) + c.CountText(p.ToolCall.ArgumentsJSON) + c.CountText(p.ToolResult.Content)
	}
	return n, agentstate.ProvenanceEstimated
}
func (c fakeCounter) CountPreamble(ctx *agentstate.Context) (int, int) {
	return c.CountText(ctx.SystemPrompt), 0
}
func (fakeCounter) Name() string { return "fake" }

type fakeResolver struct{ window, output int }

func (r fakeResolver) Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error) {
	if spec.Name == "" {
		return agentstate.ModelInfo{}, nil, &agentstate.UnknownModelError{Field: "state.model.name", Model: spec.Name}
	}
	return agentstate.ModelInfo{Name: spec.Name, ContextWindow: r.window, MaxOutputTokens: r.output}, fakeCounter{}, nil
}

// builtinTypes are the policy types the built-in profiles use, with their stages.
var builtinTypes = []fakeFactory{
	{typ: "normalize", stage: policies.StageNormalize},
	{typ: "project", stage: policies.StageProject},
	{typ: "observation_masking", stage: policies.StageIsolate},
	{typ: "transparent", stage: policies.StageIsolate},
	{typ: "boundary", stage: policies.StageIsolate},
	{typ: "estimate", stage: policies.StageEstimate},
	{typ: "token_budget", stage: policies.StageBudget},
	{typ: "llm_plan", stage: policies.StagePlan},
	{typ: "threshold", stage: policies.StageDecide},
	{typ: "composite", stage: policies.StageDecide},
	{typ: "clamp", stage: policies.StageCompact},
	{typ: "dedupe", stage: policies.StageCompact},
	{typ: "mask_observations", stage: policies.StageCompact},
	{typ: "drop_low_importance", stage: policies.StageCompact},
	{typ: "summarize", stage: policies.StageCompact},
	{typ: "llm_summarize", stage: policies.StageCompact},
	{typ: "truncate", stage: policies.StageCompact},
	{typ: "repair", stage: policies.StageCompact, repair: true},
	{typ: "render", stage: policies.StageRender},
}

func fakeRegistry() *policies.Registry {
	fs := make([]policies.Factory, len(builtinTypes))
	for i, f := range builtinTypes {
		fs[i] = f
	}
	reg, err := policies.NewRegistry(fs...)
	if err != nil {
		panic(err)
	}
	return reg
}

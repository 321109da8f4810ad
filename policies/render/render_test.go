package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// reasoningWork is a view with what some providers cannot take: reasoning
// parts (not OpenAI) and a response format (not Anthropic).
func reasoningWork(set ...statetest.Set) *policies.Work {
	st := &agentstate.State{
		SchemaVersion: agentstate.CurrentSchemaVersion,
		Model:         agentstate.ModelSpec{Name: "claude-opus-4-1"},
		Context: agentstate.Context{
			SystemPrompt:   "You answer briefly.",
			ResponseFormat: `{"type":"object","properties":{"answer":{"type":"string"}}}`,
			Messages: []agentstate.Message{
				{ID: "u1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("What is 2+2?")}},
				{ID: "a1", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{
					{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: "Add them.", Signature: []byte{1, 2}}},
					agentstate.TextPart("4"),
				}},
			},
		},
	}
	return statetest.Work(st, set...)
}

func TestPolicy(t *testing.T) {
	f := NewFactory()
	if f.Type() != "render" || f.Stage() != policies.StageRender {
		t.Fatalf("factory is %s/%s", f.Type(), f.Stage())
	}
	p, err := f.Create(f.CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		format     agentstate.RenderFormat
		wantPrefix string
		wantWarns  []string
	}{
		{"none leaves Rendered empty", agentstate.RenderNone, "", nil},
		{"openai warns about reasoning", agentstate.RenderOpenAI, `{"model":"claude-opus-4-1","messages":[{"role":"system"`,
			[]string{"render openai: 1 reasoning part(s) omitted (Chat Completions accepts no reasoning input)"}},
		{"anthropic warns about the response format", agentstate.RenderAnthropic, `{"model":"claude-opus-4-1","system":"You answer briefly."`,
			[]string{"render anthropic: 1 response format(s) omitted (the Messages API has no response_format)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := reasoningWork(statetest.Render(tt.format))
			if err := p.Apply(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(w.Rendered, tt.wantPrefix) || (tt.wantPrefix == "") != (w.Rendered == "") {
				t.Errorf("Rendered = %q, want it to start with %q", w.Rendered, tt.wantPrefix)
			}
			if diff := cmp.Diff(tt.wantWarns, w.Report().Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := f.Create(nil); err == nil {
		t.Error("Create(nil) succeeded")
	}
}

// A context the provider would refuse is the render error, unwrapped.
func TestPolicyReturnsTheRenderError(t *testing.T) {
	p, err := NewFactory().Create(&Config{})
	if err != nil {
		t.Fatal(err)
	}
	w := statetest.Work(&agentstate.State{Model: agentstate.ModelSpec{Name: "m"}}, statetest.Render(agentstate.RenderAnthropic))
	var invalid *agentstate.InvalidArgumentError
	if err := p.Apply(t.Context(), w); err == nil || !errors.As(err, &invalid) || invalid.Violations[0].Field != "options.render" {
		t.Fatalf("err = %v, want an InvalidArgumentError on options.render", err)
	}
	if w.Rendered != "" {
		t.Errorf("Rendered = %q after a failed render", w.Rendered)
	}
}

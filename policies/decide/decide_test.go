package decide

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// build decodes YAML settings over a factory's defaults, as profiles do.
func build(t *testing.T, f policies.Factory, settings string) (policies.Config, error) {
	t.Helper()
	cfg := f.CreateDefaultConfig()
	if settings != "" {
		dec := yaml.NewDecoder(strings.NewReader(settings))
		dec.KnownFields(true)
		if err := dec.Decode(cfg); err != nil {
			t.Fatalf("decode %q: %v", settings, err)
		}
	}
	return cfg, cfg.Validate()
}

func user(id string) agentstate.Entry {
	return agentstate.Entry{Message: agentstate.Message{ID: id, Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("hi")}}, SourceID: id, Tokens: 10, Counted: true}
}

func toolCall(id string) agentstate.Entry {
	return agentstate.Entry{Message: agentstate.Message{ID: id, Role: agentstate.RoleAssistant, ExecutionID: "e1", Parts: []agentstate.Part{{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c1", Name: "grep"}}}}, SourceID: id, Tokens: 10, Counted: true}
}

func withHeadroom(b *agentstate.Budget, tokens int) *agentstate.Budget {
	b.MinHeadroom = tokens
	return b
}

type outcome struct {
	Requested bool
	Reason    string
	Target    int
	Warnings  []string
}

func TestDecide(t *testing.T) {
	budget := func(used, soft int, over bool) *agentstate.Budget {
		return &agentstate.Budget{ContextWindow: 110000, ReservedOutput: 10000, Used: used, SoftThreshold: soft, OverSoftThreshold: over, Remaining: 100000 - used}
	}
	running := agentstate.Execution{ID: "e1", Status: agentstate.ExecutionRunning}
	done := agentstate.Execution{ID: "e1", Status: agentstate.ExecutionCompleted}
	many := make([]agentstate.Entry, 0, 6)
	for _, id := range []string{"m1", "m2", "m3", "m4", "m5", "m6"} {
		many = append(many, user(id))
	}
	tests := []struct {
		name     string
		factory  policies.Factory
		settings string
		budget   *agentstate.Budget
		exec     agentstate.Execution
		entries  []agentstate.Entry
		want     outcome
	}{
		{
			name: "threshold over soft", factory: NewThresholdFactory(), budget: budget(91204, 80000, true), exec: done,
			entries: []agentstate.Entry{user("m1")},
			want:    outcome{Requested: true, Reason: "used 91,204 of 100,000 tokens, at or over the soft threshold of 80,000", Target: 60000},
		},
		{
			name: "threshold under soft", factory: NewThresholdFactory(), budget: budget(79999, 80000, false), exec: done,
			entries: []agentstate.Entry{user("m1")},
		},
		{
			name: "threshold exactly at soft fires", factory: NewThresholdFactory(), budget: budget(80000, 80000, true), exec: done,
			entries: []agentstate.Entry{user("m1")},
			want:    outcome{Requested: true, Reason: "used 80,000 of 100,000 tokens, at or over the soft threshold of 80,000", Target: 60000},
		},
		{
			name: "threshold own ratio fires at the point", factory: NewThresholdFactory(), settings: "{ratio: 0.5, target_ratio: 0.5}",
			budget: budget(50000, 80000, false), exec: done, entries: []agentstate.Entry{user("m1")},
			want: outcome{Requested: true, Reason: "used 50,000 of 100,000 tokens, at or over the threshold 0.5 of the usable window of 50,000", Target: 25000},
		},
		{
			name: "threshold own ratio below the point", factory: NewThresholdFactory(), settings: "{ratio: 0.5}",
			budget: budget(49999, 10, true), exec: done, entries: []agentstate.Entry{user("m1")},
		},
		{
			name: "threshold under soft but below the budget's headroom", factory: NewThresholdFactory(),
			budget: withHeadroom(budget(95001, 98000, false), 5000), exec: done, entries: []agentstate.Entry{user("m1")},
			want: outcome{Requested: true, Reason: "4,999 tokens remaining (used 95,001 of 100,000), below the budget's min headroom of 5,000", Target: 71250},
		},
		{
			name: "threshold at the budget's headroom", factory: NewThresholdFactory(),
			budget: withHeadroom(budget(95000, 98000, false), 5000), exec: done, entries: []agentstate.Entry{user("m1")},
		},
		{
			name: "headroom below minimum", factory: NewHeadroomFactory(), settings: "{min_headroom_tokens: 10000}",
			budget: budget(95000, 80000, true), exec: done, entries: []agentstate.Entry{user("m1")},
			want: outcome{Requested: true, Reason: "5,000 tokens remaining (used 95,000 of 100,000), below min headroom 10,000", Target: 67500},
		},
		{
			name: "headroom at minimum", factory: NewHeadroomFactory(), settings: "{min_headroom_tokens: 10000}",
			budget: budget(90000, 80000, true), exec: done, entries: []agentstate.Entry{user("m1")},
		},
		{
			name: "message count over", factory: NewMessageCountFactory(), settings: "{max_messages: 5}",
			budget: budget(60, 80000, false), exec: done, entries: many,
			want: outcome{Requested: true, Reason: "6 messages, more than max messages 5", Target: 45},
		},
		{
			name: "message count at max", factory: NewMessageCountFactory(), settings: "{max_messages: 6}",
			budget: budget(60, 80000, false), exec: done, entries: many,
		},
		{
			name: "deferred mid tool loop", factory: NewThresholdFactory(), budget: budget(91204, 80000, true), exec: running,
			entries: []agentstate.Entry{user("m1"), toolCall("m2")},
			want:    outcome{Warnings: []string{`compaction deferred: used 91,204 of 100,000 tokens, at or over the soft threshold of 80,000, but execution "e1" is in the middle of a tool loop; it compacts at the next user message or at the end of the execution`}},
		},
		{
			name: "running execution at a user message boundary", factory: NewThresholdFactory(), budget: budget(91204, 80000, true), exec: running,
			entries: []agentstate.Entry{toolCall("m1"), user("m2")},
			want:    outcome{Requested: true, Reason: "used 91,204 of 100,000 tokens, at or over the soft threshold of 80,000", Target: 60000},
		},
		{
			name: "composite any, second fires", factory: NewCompositeFactory(),
			settings: "{mode: any, triggers: [{type: threshold, settings: {ratio: 0.8}}, {type: message_count, settings: {max_messages: 5}}]}",
			budget:   budget(60, 80000, false), exec: done, entries: many,
			want: outcome{Requested: true, Reason: "6 messages, more than max messages 5", Target: 45},
		},
		{
			name: "composite all, one does not fire", factory: NewCompositeFactory(),
			settings: "{mode: all, triggers: [{type: threshold, settings: {ratio: 0.8}}, {type: message_count, settings: {max_messages: 5}}]}",
			budget:   budget(60, 80000, false), exec: done, entries: many,
		},
		{
			name: "composite all fire, smallest target wins", factory: NewCompositeFactory(),
			settings: "{mode: all, triggers: [{type: threshold}, {type: composite, settings: {triggers: [{type: message_count, settings: {max_messages: 5}}]}}]}",
			budget:   budget(91204, 80000, true), exec: done, entries: many,
			want: outcome{Requested: true, Reason: "used 91,204 of 100,000 tokens, at or over the soft threshold of 80,000; and 6 messages, more than max messages 5", Target: 60000},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := build(t, tc.factory, tc.settings)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			p, err := tc.factory.Create(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Triggers read ctxc's own count of the view: the preamble makes
			// it the budget's used count.
			w, _ := policies.NewWork(policies.Input{State: &agentstate.State{Execution: tc.exec}})
			w.Budget, w.Entries = tc.budget, tc.entries
			w.SystemTokens = tc.budget.Used - w.MessageTokens()
			if err := p.Apply(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			got := outcome{Requested: w.Decision.Compact, Reason: w.Decision.Reason, Target: w.Decision.Target, Warnings: w.Report().Warnings}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAnEarlierDecisionStays: a trigger that does not fire leaves what a
// decide policy before it decided as it is.
func TestAnEarlierDecisionStays(t *testing.T) {
	p, err := NewThresholdFactory().Create(NewThresholdFactory().CreateDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w, _ := policies.NewWork(policies.Input{State: &agentstate.State{}})
	w.Budget = &agentstate.Budget{Used: 10, SoftThreshold: 80}
	w.Decision = policies.Decision{Compact: true, Reason: "asked before", Target: 7}
	if err := p.Apply(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if want := (policies.Decision{Compact: true, Reason: "asked before", Target: 7}); w.Decision != want {
		t.Errorf("decision %+v, want the earlier %+v kept", w.Decision, want)
	}
}

func TestNoBudgetIsAnError(t *testing.T) {
	p, _ := NewHeadroomFactory().Create(NewHeadroomFactory().CreateDefaultConfig())
	if w, _ := policies.NewWork(policies.Input{State: &agentstate.State{}}); p.Apply(context.Background(), w) == nil {
		t.Error("Apply without a budget: got nil error")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		factory  policies.Factory
		settings string
		want     []string
	}{
		{name: "threshold defaults", factory: NewThresholdFactory()},
		{name: "threshold bad", factory: NewThresholdFactory(), settings: "{ratio: 1.5, target_ratio: 0}",
			want: []string{"ratio: 1.5 must be in (0, 1]", "target_ratio: 0 must be in (0, 1]"}},
		{name: "headroom bad", factory: NewHeadroomFactory(), settings: "{min_headroom_tokens: 0}",
			want: []string{"min_headroom_tokens: 0 must be positive"}},
		{name: "message count bad", factory: NewMessageCountFactory(), settings: "{max_messages: -1, target_ratio: 2}",
			want: []string{"max_messages: -1 must be positive", "target_ratio: 2 must be in (0, 1]"}},
		{name: "composite nested problems with paths", factory: NewCompositeFactory(),
			settings: "{mode: some, triggers: [{type: threshold, settings: {ratio: 2}}, {type: nope}, {type: message_count, settings: {max_mesages: 3}}, {type: composite, settings: {mode: all, triggers: [{type: headroom, settings: {min_headroom_tokens: -5}}]}}]}",
			want: []string{
				`mode: "some" must be "any" or "all"`,
				"triggers[0].settings.ratio: 2 must be in (0, 1]",
				`triggers[1].type: unknown trigger type "nope" (known: threshold, headroom, message_count, composite)`,
				`triggers[2]: line 1: unknown key "max_mesages" in section "settings"; did you mean "max_messages"?`,
				"triggers[3].settings.triggers[0].settings.min_headroom_tokens: -5 must be positive",
			}},
		{name: "composite empty", factory: NewCompositeFactory(), settings: "{triggers: []}",
			want: []string{"triggers: at least one trigger is required"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(t, tc.factory, tc.settings)
			var got []string
			for _, e := range flatten(err) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompositeSettingsJSON(t *testing.T) {
	cfg, err := build(t, NewCompositeFactory(), "{triggers: [{type: threshold, settings: {ratio: 0.8}}, {type: message_count}]}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mode":"any","triggers":[{"type":"threshold","settings":{"ratio":0.8,"target_ratio":0.75}},{"type":"message_count","settings":{"max_messages":200,"target_ratio":0.75}}]}`
	if string(got) != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
}

func TestFactories(t *testing.T) {
	var got []string
	for _, f := range []policies.Factory{NewThresholdFactory(), NewHeadroomFactory(), NewMessageCountFactory(), NewCompositeFactory()} {
		if f.Stage() != policies.StageDecide {
			t.Errorf("%s: stage %s", f.Type(), f.Stage())
		}
		if err := f.CreateDefaultConfig().Validate(); err != nil {
			t.Errorf("%s: defaults invalid: %v", f.Type(), err)
		}
		if _, err := f.Create(&struct{ ThresholdConfig }{}); err == nil {
			t.Errorf("%s: Create accepted a foreign config", f.Type())
		}
		got = append(got, f.Type())
	}
	if diff := cmp.Diff([]string{"threshold", "headroom", "message_count", "composite"}, got); diff != "" {
		t.Error(diff)
	}
}

func TestTokens(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 91204: "91,204", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := tokens(n); got != want {
			t.Errorf("tokens(%d) = %q, want %q", n, got, want)
		}
	}
}

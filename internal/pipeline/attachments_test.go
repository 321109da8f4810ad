package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// placePolicy stands for "place_attachments": one message per attachment.
type placePolicy struct{}

func (placePolicy) Apply(_ context.Context, w *policies.Work) error {
	for _, a := range w.Attachments() {
		w.Entries = append(w.Entries, agentstate.Entry{Message: agentstate.Message{ID: "att-" + a.ID, Role: agentstate.RoleUser, Kind: agentstate.KindEvent, Pinned: true,
			Parts: []agentstate.Part{agentstate.TextPart(a.Content)}}})
		w.Touch(len(w.Entries) - 1)
	}
	return nil
}

type placeFactory struct{ fakeFactory }

func (placeFactory) Create(policies.Config) (policies.Policy, error) { return placePolicy{}, nil }

// TestAttachmentsArePlacedWhateverTheStages: a profile without a plan stage
// places a run's attachments with the catalog's attachment policy, in the
// plan stage's place and only when there are attachments; a profile with its
// own plan policy uses it; a profile that cannot place them (no budget)
// refuses them, naming the field, rather than drop them.
func TestAttachmentsArePlacedWhateverTheStages(t *testing.T) {
	fs := []policies.Factory{placeFactory{fakeFactory{typ: "place", stage: policies.StagePlan}}}
	for _, f := range builtinTypes {
		fs = append(fs, f)
	}
	reg, err := policies.NewRegistry(fs...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{AttachmentPolicy: "place", Profiles: profilesFromYAML(t, `
- name: no-plan
  stages: [{policy: normalize}, {policy: estimate}, {policy: token_budget}, {policy: threshold}, {policy: truncate}, {policy: render}]
- name: own-plan
  stages: [{policy: normalize}, {policy: estimate}, {policy: token_budget}, {policy: llm_plan}]
- name: no-budget
  stages: [{policy: normalize}, {policy: project}]
`)}
	c, err := NewCatalog(reg, fakeResolver{window: 10000, output: 100}, noop.NewTracerProvider(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	policiesOf := map[string]string{}
	for _, p := range c.Profiles() {
		policiesOf[p.Name] = p.AttachmentPolicy
	}
	if diff := cmp.Diff(map[string]string{"no-plan": "place", "own-plan": "llm_plan", "no-budget": "", "pragmatic": "place", "budget-aware": "place", "policy-driven": "place", "llm-assisted": "llm_plan"}, policiesOf); diff != "" {
		t.Errorf("attachment policies (-want +got):\n%s", diff)
	}
	stages := func(profile string, attachments []agentstate.Attachment) ([]string, []string, error) {
		res, err := c.Run(context.Background(), Request{Profile: profile, State: chatState(), Attachments: attachments})
		if err != nil {
			return nil, nil, err
		}
		var ran, ids []string
		for _, s := range res.Report.Stages {
			ran = append(ran, s.Stage+"/"+s.Policy)
		}
		for _, m := range res.Messages() {
			ids = append(ids, m.ID)
		}
		return ran, ids, nil
	}
	doc := []agentstate.Attachment{{ID: "doc", Content: "the document"}}
	tests := []struct {
		name, profile string
		attachments   []agentstate.Attachment
		wantStages    []string
		wantLast      string
	}{
		{"no plan stage, attachments", "no-plan", doc,
			[]string{"normalize/normalize", "estimate/estimate", "budget/token_budget", "plan/place", "budget/token_budget", "decide/threshold", "compact/truncate", "render/render"}, "att-doc"},
		{"no plan stage, no attachments", "no-plan", nil,
			[]string{"normalize/normalize", "estimate/estimate", "budget/token_budget", "decide/threshold", "compact/truncate", "render/render"}, "u4"},
		{"its own plan policy", "own-plan", doc,
			[]string{"normalize/normalize", "estimate/estimate", "budget/token_budget", "plan/llm_plan"}, "u4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran, ids, err := stages(tt.profile, tt.attachments)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantStages, ran); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
			if ids[len(ids)-1] != tt.wantLast {
				t.Errorf("messages %v, want %s last", ids, tt.wantLast)
			}
		})
	}
	_, _, err = stages("no-budget", doc)
	var invalid *agentstate.InvalidArgumentError
	if !errors.As(err, &invalid) || invalid.Reason != ReasonAttachmentsUnsupported || invalid.Violations[0].Field != "attachments" {
		t.Fatalf("no-budget with attachments: err %v, want INVALID_ARGUMENT %s on attachments", err, ReasonAttachmentsUnsupported)
	}
	if got, want := invalid.Violations[0].Description, `profile "no-budget" cannot place attachments: it has no plan stage, nor the estimate and budget stages placing them needs; use a profile that has them (every built-in profile does)`; got != want {
		t.Errorf("no-budget with attachments: description\n%s\nwant\n%s", got, want)
	}
	if _, _, err := stages("no-budget", nil); err != nil {
		t.Errorf("no-budget without attachments: %v", err)
	}
}

func TestAttachmentPolicyMustBeAPlanPolicy(t *testing.T) {
	for _, typ := range []string{"nope", "truncate"} {
		_, err := NewCatalog(fakeRegistry(), fakeResolver{}, noop.NewTracerProvider(), Config{AttachmentPolicy: typ})
		if want := `attachment policy "` + typ + `" is not a registered plan-stage policy`; err == nil || err.Error() != want {
			t.Errorf("AttachmentPolicy %q: err %v, want %q", typ, err, want)
		}
	}
}

package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace/noop"
	"gopkg.in/yaml.v3"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func profilesFromYAML(t *testing.T, src string) []ProfileSpec {
	t.Helper()
	var specs []ProfileSpec
	if err := yaml.Unmarshal([]byte(src), &specs); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return specs
}

func TestBuiltinProfilesBuild(t *testing.T) {
	c, err := NewCatalog(fakeRegistry(), fakeResolver{}, noop.NewTracerProvider(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"budget-aware", "llm-assisted", "policy-driven", "pragmatic"}, c.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if c.DefaultProfile() != "pragmatic" {
		t.Errorf("default = %q, want pragmatic", c.DefaultProfile())
	}
	for _, p := range c.Profiles() {
		if p.Default != (p.Name == "pragmatic") || p.Source != BuiltinSource || len(p.Stages) == 0 {
			t.Errorf("profile %+v", p)
		}
		for _, s := range p.Stages {
			if !strings.HasPrefix(s.SettingsJSON, "{") {
				t.Errorf("%s/%s settings %q is not a JSON object", p.Name, s.Policy, s.SettingsJSON)
			}
		}
	}
}

func TestCustomProfileSettingsAreDecodedOverDefaults(t *testing.T) {
	specs := profilesFromYAML(t, `
- name: mine
  description: test
  recent_turns: 3
  stages:
    - policy: normalize
    - policy: estimate
    - policy: token_budget
    - policy: truncate
      settings: {limit: 7}
`)
	c, err := NewCatalog(fakeRegistry(), fakeResolver{}, noop.NewTracerProvider(), Config{Profiles: specs, Source: "ctxc.yaml", DefaultProfile: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	var got ProfileInfo
	for _, p := range c.Profiles() {
		if p.Name == "mine" {
			got = p
		}
	}
	want := ProfileInfo{Name: "mine", Description: "test", Default: true, Source: "ctxc.yaml", RecentTurns: 3, FitTargetRatio: DefaultFitTargetRatio, Stages: []StepInfo{
		{Stage: "normalize", Policy: "normalize", SettingsJSON: `{"drop":false,"grow":false,"drop_pinned":false,"request":false,"limit":0,"fail":""}`},
		{Stage: "estimate", Policy: "estimate", SettingsJSON: `{"drop":false,"grow":false,"drop_pinned":false,"request":false,"limit":0,"fail":""}`},
		{Stage: "budget", Policy: "token_budget", SettingsJSON: `{"drop":false,"grow":false,"drop_pinned":false,"request":false,"limit":0,"fail":""}`},
		{Stage: "compact", Policy: "truncate", SettingsJSON: `{"drop":false,"grow":false,"drop_pinned":false,"request":false,"limit":7,"fail":""}`},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
}

// Every problem of every profile is reported at once.
func TestBadProfilesReportEveryProblem(t *testing.T) {
	specs := profilesFromYAML(t, `
- name: broken
  recent_turns: -1
  stages:
    - policy: project
    - policy: normalize
    - policy: nosuch
    - policy: truncate
      settings: {limit: -5, drop: true, grow: true}
    - policy: clamp
      settings: {unknown_key: 1}
- name: pragmatic
  stages:
    - policy: normalize
- name: ""
  stages: []
- name: unmeasured
  stages:
    - policy: normalize
    - policy: token_budget
`)
	_, err := NewCatalog(fakeRegistry(), fakeResolver{}, noop.NewTracerProvider(), Config{Profiles: specs, DefaultProfile: "nope"})
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	for _, want := range []string{
		"profiles[0] (broken): recent_turns: -1 must not be negative",
		"stages[0] (project): the first policy must be a normalize-stage policy",
		"stages[1] (normalize): stage normalize cannot follow stage project",
		`stages[2] (nosuch): unknown policy "nosuch"`,
		"stages[3] (truncate): settings: limit: -5 must not be negative",
		"drop and grow are exclusive",
		`stages[4] (clamp): line 11: unknown key "unknown_key" in section "settings"; its keys: drop, grow,`,
		"a compact policy needs estimate and budget policies before it",
		`profiles[1] (pragmatic): profile "pragmatic" is defined twice`,
		"profiles[2] (): name: required",
		"stages: at least one policy is required",
		`default_profile: "nope" is not a profile`,
		"profiles[3] (unmeasured): stages: a budget policy needs estimate policies before it",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q; got:\n%s", want, msg)
		}
	}
}

func TestUnknownDefaultProfile(t *testing.T) {
	_, err := NewCatalog(fakeRegistry(), fakeResolver{}, noop.NewTracerProvider(), Config{DefaultProfile: "nope"})
	if err == nil || !strings.Contains(err.Error(), `default_profile: "nope" is not a profile (known: budget-aware, llm-assisted, policy-driven, pragmatic)`) {
		t.Fatalf("err = %v", err)
	}
	// A default naming a profile that is given but broken is reported through
	// that profile's own problems, not as unknown.
	specs := profilesFromYAML(t, "- name: mine\n  stages: []\n")
	_, err = NewCatalog(fakeRegistry(), fakeResolver{}, noop.NewTracerProvider(), Config{Profiles: specs, DefaultProfile: "mine"})
	if err == nil || !strings.Contains(err.Error(), "profiles[0] (mine): stages: at least one policy is required") || strings.Contains(err.Error(), "default_profile") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnknownProfileListsKnownNames(t *testing.T) {
	c, err := NewCatalog(fakeRegistry(), fakeResolver{}, noop.NewTracerProvider(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(t.Context(), Request{Profile: "nope", State: &agentstate.State{}})
	var unknown *agentstate.UnknownProfileError
	if !errors.As(err, &unknown) {
		t.Fatalf("err = %v, want UnknownProfileError", err)
	}
	if diff := cmp.Diff([]string{"budget-aware", "llm-assisted", "policy-driven", "pragmatic"}, unknown.Known); diff != "" {
		t.Errorf("known (-want +got):\n%s", diff)
	}
}

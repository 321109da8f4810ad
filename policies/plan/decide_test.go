package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShouldUseLLMPlanning walks the rows of its table at their
// boundaries (default thresholds; budget 10000 tokens unless said).
func TestShouldUseLLMPlanning(t *testing.T) {
	base := PlanningInput{Artifacts: 2, TotalChars: 8000, LargestChars: 6000, ArtifactTokens: 2000, AvailableTokens: 10000}
	with := func(change func(*PlanningInput)) PlanningInput { in := base; change(&in); return in }
	tests := []struct {
		name string
		in   PlanningInput
		want bool
		why  string
	}{
		{"no artifacts", PlanningInput{}, false, "no artifacts"},
		{"historical beats small", with(func(i *PlanningInput) { i.Historical, i.TotalChars = 1, 10 }), true, "historical artifacts present"},
		{"total 4999 chars", with(func(i *PlanningInput) { i.TotalChars = 4999 }), false, "artifacts are small"},
		{"total 5000 chars fits", with(func(i *PlanningInput) { i.TotalChars = 5000 }), false, "artifacts fit with the buffer on a cheap model"},
		{"fits exactly with the 30% buffer", with(func(i *PlanningInput) { i.ArtifactTokens = 7692 }), false, "artifacts fit with the buffer on a cheap model"},
		{"one token past the buffer, large artifact", with(func(i *PlanningInput) { i.ArtifactTokens, i.LargestChars = 7693, 10001 }), true, "an artifact is large"},
		{"one token past the buffer, 10000-char artifact", with(func(i *PlanningInput) { i.ArtifactTokens, i.LargestChars = 7693, 10000 }), false, "no reason to plan"},
		{"near the limit (90%)", with(func(i *PlanningInput) { i.ArtifactTokens = 9000 }), true, "artifacts are near or over the token budget"},
		{"over the limit", with(func(i *PlanningInput) { i.ArtifactTokens = 20000 }), true, "artifacts are near or over the token budget"},
		{"fits but expensive primary", with(func(i *PlanningInput) { i.PrimaryInputPerMTok = 10 }), true, "the primary model is expensive"},
		{"fits on a model just under expensive", with(func(i *PlanningInput) { i.PrimaryInputPerMTok = 9.99 }), false, "artifacts fit with the buffer on a cheap model"},
		{"large artifact that fits on a cheap model", with(func(i *PlanningInput) { i.LargestChars = 30000 }), false, "artifacts fit with the buffer on a cheap model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := ShouldUseLLMPlanning(tc.in, DefaultThresholds())
			if diff := cmp.Diff([]any{tc.want, tc.why}, []any{got, why}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePlan(t *testing.T) {
	known := map[string]bool{"a": true, "b": true}
	tests := []struct {
		name, text, wantErr string
	}{
		{"valid in a fence", "```json\n{\"artifacts\":[{\"artifact_id\":\"a\",\"strategy\":\"rag_extract\",\"priority\":1}]}\n```", ""},
		{"not json", "I think you should include a", "plan is not JSON"},
		{"unknown id", `{"artifacts":[{"artifact_id":"z","strategy":"include","priority":1}]}`, `unknown artifact_id "z"`},
		{"bad strategy and priority", `{"artifacts":[{"artifact_id":"a","strategy":"keep","priority":0}]}`, "unknown strategy \"keep\"\nartifacts[0]: priority 0"},
		{"twice", `{"artifacts":[{"artifact_id":"a","strategy":"include","priority":1},{"artifact_id":"a","strategy":"exclude","priority":2}]}`, "decided twice"},
		{"empty", `{"artifacts":[]}`, "plan decides no artifact"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePlan(tc.text, known)
			if tc.wantErr == "" {
				if err != nil || p.Artifacts[0].Strategy != StrategyExtract {
					t.Errorf("plan %+v err %v", p, err)
				}
				return
			}
			if err == nil || !contains(err.Error(), tc.wantErr) {
				t.Errorf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestParsePlanReadsSeedFieldNames: a plan in the planner's words
// (ArtifactDecision's fields, ProcessingStrategy's values) decodes into the
// decisions execution follows.
func TestParsePlanReadsSeedFieldNames(t *testing.T) {
	text := `{"artifacts":[
{"artifact_id":"a","strategy":"rag_extract","priority":1,"relevance_rationale":"only the quota line","extraction_query":"disk quota"},
{"artifact_id":"b","strategy":"summarize","priority":2,"relevance_rationale":"context","summarization_focus":"the failing step"},
{"artifact_id":"c","strategy":"include_full","priority":3,"relevance_rationale":"small"}],"reasoning":"r"}`
	got, err := ParsePlan(text, map[string]bool{"a": true, "b": true, "c": true})
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{Reasoning: "r", Artifacts: []Decision{
		{ArtifactID: "a", Strategy: StrategyExtract, Priority: 1, Rationale: "only the quota line", Query: "disk quota"},
		{ArtifactID: "b", Strategy: StrategySummarize, Priority: 2, Rationale: "context", Focus: "the failing step"},
		{ArtifactID: "c", Strategy: StrategyInclude, Priority: 3, Rationale: "small"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

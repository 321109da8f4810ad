//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/docset"
	"github.com/contextcompiler/ctxc/internal/llm/llmtest"
)

// TestReadmeBuiltinProfilesTable: the README's table of built-in profiles
// names every profile ListProfiles reports as built in, with its stages in
// order, and each has a description.
func TestReadmeBuiltinProfilesTable(t *testing.T) {
	t.Parallel()
	doc, err := docset.Read(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	section := doc.Text
	start := strings.Index(section, "\n## Built-in profiles\n")
	if start < 0 {
		t.Fatal("the documentation has no Built-in profiles section")
	}
	section = section[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	documented := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		var stages []string
		for _, s := range strings.Split(cells[1], ", ") {
			stages = append(stages, strings.Trim(s, "`"))
		}
		documented[strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")] = stages
	}

	s := startServer(t)
	list, err := s.client().ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	served := map[string][]string{}
	for _, p := range list.GetProfiles() {
		if p.GetSource() != "builtin" {
			continue
		}
		if strings.TrimSpace(p.GetDescription()) == "" {
			t.Errorf("built-in profile %s has no description", p.GetName())
		}
		for _, st := range p.GetStages() {
			served[p.GetName()] = append(served[p.GetName()], st.GetPolicy())
		}
	}
	if diff := cmp.Diff(served, documented); diff != "" || len(served) < 4 {
		t.Errorf("README's built-in profiles (-ListProfiles +README):\n%s", diff)
	}
}

// TestLLMAssistedProfile: the built-in llm-assisted profile reaches boundary
// isolation, the planner and the summarizer model by name; with no model
// configured each model step falls back to its deterministic policy, marked
// degraded, and the call succeeds; with a summarizer configured the summary
// is the model's.
func TestLLMAssistedProfile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Boundary isolation alone brings the example under 600 tokens: this
	// window still makes its trigger fire.
	window := uint32(700)
	compact := func(t *testing.T, s *server) *ctxcv1.CompactResponse {
		t.Helper()
		resp, err := s.client().Compact(ctx, &ctxcv1.CompactRequest{State: readExample(t, "coding-agent.json").GetState(), Profile: "llm-assisted",
			Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	stage := func(report *ctxcv1.CompileReport, policy string) *ctxcv1.StageReport {
		var found *ctxcv1.StageReport
		for _, st := range report.GetStages() {
			if st.GetPolicy() == policy && (found == nil || st.GetDegraded()) {
				found = st
			}
		}
		return found
	}

	t.Run("no models: deterministic, degraded", func(t *testing.T) {
		s := startServer(t)
		resp := compact(t, s)
		if got := stage(resp.GetReport(), "boundary"); got == nil || got.GetMessagesAffected() == 0 {
			t.Errorf("boundary isolation: %v, want the finished execution's trace turned into a record", got)
		}
		sum := stage(resp.GetReport(), "llm_summarize")
		if !sum.GetDegraded() || !strings.Contains(sum.GetDegradedReason(), "no summarizer model configured") {
			t.Errorf("llm_summarize: %v, want degraded for want of a model", sum)
		}
		if got := summaryText(resp.GetState()); !strings.Contains(got, "written by ctxc without a model") {
			t.Errorf("persisted summary %q is not the deterministic one", got)
		}

		bigger := uint32(6000)
		req := readExample(t, "coding-agent.json")
		req.Profile = "llm-assisted"
		req.Options = &ctxcv1.CompileOptions{MaxContextTokenCount: &bigger} // the runbook does not fit whole
		req.Attachments = []*ctxcv1.Attachment{{AttachmentId: "runbook", Title: "Stock runbook",
			Content: strings.Repeat("Reservations retry three times with exponential backoff before failing. ", 400)}}
		compiled, err := s.client().Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		plan := stage(compiled.GetReport(), "llm_plan")
		if !plan.GetDegraded() || !strings.Contains(plan.GetDegradedReason(), "no planner model configured") {
			t.Errorf("llm_plan: %v, want degraded for want of a planner", plan)
		}
		if !strings.Contains(attachmentsMessage(compiled), "Reservations retry") {
			t.Error("the deterministic plan did not place the attachment")
		}
	})

	t.Run("a summarizer model writes the summary", func(t *testing.T) {
		fake := llmtest.NewServer(t)
		fake.Script(func(llmtest.Received) llmtest.Reply {
			return llmtest.Reply{Content: "## Goal\nFix TestReserveStock.\n## Decisions\n- Lock only the SKU's row.", InputTokens: 900, OutputTokens: 30}
		})
		s := startServer(t, "--config", writeConfig(t, `
models:
  summarizer:
    model: gpt-4o-mini
    base_url: `+fake.URL+`
`))
		resp := compact(t, s)
		if sum := stage(resp.GetReport(), "llm_summarize"); sum == nil || sum.GetDegraded() || fake.Calls() == 0 {
			t.Errorf("llm_summarize: %v after %d model calls, want the model's summary", sum, fake.Calls())
		}
		if got := summaryText(resp.GetState()); !strings.Contains(got, "Lock only the SKU's row.") {
			t.Errorf("persisted summary %q is not the model's", got)
		}
	})
}

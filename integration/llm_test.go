//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/llm/llmtest"
)

// TestLLMSummariesThroughTheBinary points the real server at a scripted
// OpenAI-compatible endpoint: Compact summarizes with the model, reports its
// usage and cost, a second identical call is served from the summary cache
// without a model call, and an endpoint that fails makes the request fall back
// to the deterministic summary, degraded, instead of failing.
func TestLLMSummariesThroughTheBinary(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	fake.Script(func(llmtest.Received) llmtest.Reply {
		return llmtest.Reply{Content: "## Goal\nFix TestReserveStock.\n## Decisions\n- Lock only the SKU's row.", InputTokens: 900, OutputTokens: 30}
	})
	config := llmConfig(t, fake.URL, "5s", 1, "")
	s := startServer(t, "--config", config)
	window := uint32(2000)
	req := readExample(t, "coding-agent.json")
	compact := func() *ctxcv1.CompactResponse {
		t.Helper()
		resp, err := s.client().Compact(context.Background(), &ctxcv1.CompactRequest{State: req.GetState(), Profile: "llm-compact",
			Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	first := compact()
	calls := fake.Calls()
	if calls == 0 {
		t.Fatal("the summarizer model was never called")
	}
	if got := summaryText(first.GetState()); !strings.Contains(got, "Lock only the SKU's row.") {
		t.Errorf("persisted summary %q is not the model's", got)
	}
	usage := first.GetReport().GetModelUsage()
	if len(usage) != 1 || usage[0].GetTask() != "summarizer" || usage[0].GetModel() != "gpt-4o-mini" || usage[0].GetInputTokenCount() == 0 {
		t.Errorf("model usage %v", usage)
	}
	if first.GetReport().GetTotalCostUsd() <= 0 {
		t.Errorf("total cost %v, want the registry's gpt-4o-mini prices applied", first.GetReport().GetTotalCostUsd())
	}
	for _, st := range first.GetReport().GetStages() {
		if st.GetDegraded() {
			t.Errorf("stage %s degraded: %s", st.GetPolicy(), st.GetDegradedReason())
		}
	}

	second := compact()
	if fake.Calls() != calls {
		t.Errorf("the identical second call made %d more model calls; the summary cache should answer", fake.Calls()-calls)
	}
	if second.GetReport().GetCache().GetHitCount() == 0 {
		t.Errorf("cache stats %v, want a hit", second.GetReport().GetCache())
	}

	// The endpoint breaks: the request still succeeds, degraded, with the
	// deterministic summary.
	fake.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Status: 500} })
	req = readExample(t, "coding-agent.json")
	// A changed message inside the summarized span, so the cache cannot answer.
	result := req.State.Context.Messages[3].Parts[0].GetToolResult()
	result.Content += "\n(rerun with -count=1)"
	degraded := compact()
	var reason string
	for _, st := range degraded.GetReport().GetStages() {
		if st.GetPolicy() == "llm_summarize" && st.GetDegraded() {
			reason = st.GetDegradedReason()
		}
	}
	if reason == "" {
		t.Fatalf("llm_summarize did not report the fallback: %v", degraded.GetReport().GetStages())
	}
	if got := summaryText(degraded.GetState()); !strings.Contains(got, "written by ctxc without a model") {
		t.Errorf("fallback summary %q is not the deterministic one", got)
	}
}

func summaryText(st *ctxcv1.AgentState) string {
	msgs := st.GetContext().GetMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY {
			return msgs[i].GetParts()[0].GetText()
		}
	}
	return ""
}

// TestLLMPlanningThroughTheBinary: an attached document too large to include
// whole is planned by the scripted planner (extract, with a query), the
// extract is chosen with BM25 and placed in the context, and the report says
// what happened to the artifact and what the planner cost.
func TestLLMPlanningThroughTheBinary(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	fake.Script(func(llmtest.Received) llmtest.Reply {
		return llmtest.Reply{InputTokens: 1200, OutputTokens: 60, Content: `{"artifacts":[{"artifact_id":"runbook","strategy":"rag_extract","priority":1,
			"relevance_rationale":"only the retry section answers the question","extraction_query":"retry backoff attempts"}],"reasoning":"one large document"}`}
	})
	config := writeConfig(t, `
models:
  planner:
    model: gpt-4o-mini
    base_url: `+fake.URL+`
    timeout: 5s
profiles:
  - name: planned
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: llm_plan
`)
	s := startServer(t, "--config", config)
	var doc strings.Builder
	for i := range 120 {
		fmt.Fprintf(&doc, "Section %d. The deployment pipeline builds images and pushes them to the registry on every merge.\n", i)
		if i == 77 {
			doc.WriteString("Retry policy: failed uploads retry with exponential backoff, at most 5 attempts, starting at 200ms.\n")
		}
	}
	// A window the document nearly fills: ShouldUseLLMPlanning's table calls for planning.
	window := uint32(3500)
	req := &ctxcv1.CompileRequest{
		Profile: "planned",
		Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window},
		State: &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{
			{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("How many attempts does the upload retry make, and with what backoff?")}},
		}}},
		Attachments: []*ctxcv1.Attachment{{AttachmentId: "runbook", Title: "Deploy runbook", Source: "docs/runbook.md", AttachmentType: "document", Content: doc.String()}},
		Goal:        &ctxcv1.ContextGoal{Description: "Make the flaky registry upload reliable", SuccessCriteria: []string{"uploads survive a registry restart"}},
	}
	resp, err := s.client().Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	report := resp.GetReport()
	if !report.GetPlanningUsed() || fake.Calls() != 1 {
		t.Fatalf("planning used %v after %d planner calls", report.GetPlanningUsed(), fake.Calls())
	}
	got := fake.Received()[0].User
	for _, want := range []string{"How many attempts does the upload retry make", "runbook", "Section 0.",
		"<goal>\nMake the flaky registry upload reliable\nuploads survive a registry restart\n</goal>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the planner's prompt lacks %q (question, artifact id, preview, goal):\n%s", want, got)
		}
	}
	// Seed 003's plan: its field names, in the instruction and in the answer
	// (the extraction_query is what the extract looked for).
	for _, want := range []string{`"relevance_rationale"`, `"summarization_focus"`, `"extraction_query"`, "include_full|summarize|rag_extract|exclude"} {
		if !strings.Contains(fake.Received()[0].System, want) {
			t.Errorf("the planner's instruction lacks %s", want)
		}
	}
	arts := report.GetArtifacts()
	if len(arts) != 1 || arts[0].GetStrategy() != "extract" || arts[0].GetProcessedSize() >= arts[0].GetOriginalSize() {
		t.Fatalf("artifacts %v", arts)
	}
	var context string
	for _, m := range resp.GetMessages() {
		if m.GetId() == "ctxc-attachments" {
			context = m.GetParts()[0].GetText()
		}
	}
	if !strings.Contains(context, "at most 5 attempts") || !strings.Contains(context, `most relevant to "retry backoff attempts"`) {
		t.Errorf("the extract lacks the retry section, or did not look for the plan's extraction_query:\n%s", context)
	}
	if u := report.GetModelUsage(); len(u) == 0 || u[0].GetTask() != "planner" || report.GetTotalCostUsd() <= 0 {
		t.Errorf("model usage %v, cost %v", u, report.GetTotalCostUsd())
	}
}

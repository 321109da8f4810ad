package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/llm/llmtest"
)

// TestLLMSummariesThroughTheBinary points the real server at a scripted
// OpenAI-compatible endpoint: Compact summarizes with the model, reports its
// usage and cost, a second identical call is served from the summary cache
// without a model call, and an endpoint that fails makes the request fall back
// to the deterministic summary, degraded, instead of failing.
func TestLLMSummariesThroughTheBinary(t *testing.T) {
	fake := llmtest.NewServer(t)
	fake.Script(func(llmtest.Received) llmtest.Reply {
		return llmtest.Reply{Content: "## Goal\nFix TestReserveStock.\n## Decisions\n- Lock only the SKU's row.", InputTokens: 900, OutputTokens: 30}
	})
	config := filepath.Join(t.TempDir(), "ctxc.yaml")
	if err := os.WriteFile(config, []byte(`
models:
  summarizer:
    model: gpt-4o-mini
    base_url: `+fake.URL+`
    timeout: 5s
    max_retries: 1
profiles:
  - name: llm-compact
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: llm_summarize
      - policy: truncate
      - policy: repair
`), 0o600); err != nil {
		t.Fatal(err)
	}
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

//go:build integration

package integration

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/llm/llmtest"
)

// TestMetricsThroughTheBinary drives the real server through compiles,
// compactions (with a summarizer that works, is cached, fails and trips its
// breaker), an irreducible context, an unknown profile, a repaired log and
// a Route that compacts, scraping /metrics around each call: every domain
// metric moves by what the responses say. It then checks the dashboard, the
// alert rules and the README's metrics table against what was exposed.
func TestMetricsThroughTheBinary(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	fake.Script(func(llmtest.Received) llmtest.Reply {
		return llmtest.Reply{Content: "## Goal\nFix TestReserveStock.\n## Decisions\n- Lock only the SKU's row.", InputTokens: 900, OutputTokens: 30}
	})
	// No retries, and a breaker that opens after two failed calls.
	config := llmConfig(t, fake.URL, "5s", 0, "    breaker_failures: 2\n    breaker_cooldown: 10m")
	upstream := newScriptedUpstream(t, nil)
	s := startServer(t, "--config", config, "--metrics-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--proxy-openai-upstream", upstream.URL)
	url := s.metricsURL(t)
	client := s.client()
	ctx := context.Background()
	window := uint32(2000)
	pragmatic := map[string]string{"profile": "pragmatic"}
	llmCompact := map[string]string{"profile": "llm-compact"}

	t.Run("compile: tokens out are the response's budget, stages and token cache move", func(t *testing.T) {
		req := readExample(t, "coding-agent.json")
		before := scrapeMetrics(t, url)
		first, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		middle := scrapeMetrics(t, url)
		second, err := client.Compile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		after := scrapeMetrics(t, url)
		compile := map[string]string{"method": "Compile", "profile": "pragmatic"}
		wantDelta(t, before, after, "ctxc_context_output_tokens_sum", compile, float64(first.GetBudget().GetUsedTokenCount()+second.GetBudget().GetUsedTokenCount()))
		wantDelta(t, before, after, "ctxc_context_output_tokens_count", compile, 2)
		// Nothing was compacted or planned: what came in went out.
		wantDelta(t, before, after, "ctxc_context_input_tokens_sum", compile, float64(first.GetBudget().GetUsedTokenCount()+second.GetBudget().GetUsedTokenCount()))
		wantDelta(t, before, after, "ctxc_pipeline_runs_total", with(compile, "outcome", "ok"), 2)
		wantDelta(t, before, after, "ctxc_compaction_points_count", with(compile, "kind", "event"), 2)
		wantDelta(t, before, after, "ctxc_compactions_total", compile, 0)
		ran := map[string]float64{}
		for _, resp := range []*ctxcv1.CompileResponse{first, second} {
			for _, st := range resp.GetReport().GetStages() {
				if !st.GetSkipped() {
					ran[st.GetStage()+"/"+st.GetPolicy()]++
				}
			}
		}
		for key, n := range ran {
			stage, policy, _ := strings.Cut(key, "/")
			wantDelta(t, before, after, "ctxc_stage_duration_seconds_count", map[string]string{"profile": "pragmatic", "stage": stage, "policy": policy}, n)
		}
		// The second compile of the same log tokenizes nothing: all hits.
		if d := delta(before, middle, "ctxc_token_cache_lookups_total", map[string]string{"result": "miss"}); d == 0 {
			t.Error("a cold compile counted no token-cache misses")
		}
		wantDelta(t, middle, after, "ctxc_token_cache_lookups_total", map[string]string{"result": "miss"}, 0)
		if d := delta(middle, after, "ctxc_token_cache_lookups_total", map[string]string{"result": "hit"}); d < float64(len(req.GetState().GetContext().GetMessages())) {
			t.Errorf("a warm compile of %d messages counted %v token-cache hits", len(req.GetState().GetContext().GetMessages()), d)
		}
		if n := after.sum("ctxc_token_cache_entries", nil); n == 0 || n > after.sum("ctxc_token_cache_capacity", nil) {
			t.Errorf("token cache entries %v, capacity %v", n, after.sum("ctxc_token_cache_capacity", nil))
		}
	})

	compact := func(t *testing.T, req *ctxcv1.CompileRequest) *ctxcv1.CompactResponse {
		t.Helper()
		resp, err := client.Compact(ctx, &ctxcv1.CompactRequest{State: req.GetState(), Profile: "llm-compact",
			Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	compactMatch := map[string]string{"method": "Compact", "profile": "llm-compact"}

	t.Run("compact: tokens in and out are the budgets before and after, the summarizer's calls, tokens, cost and cache", func(t *testing.T) {
		req := readExample(t, "coding-agent.json")
		before := scrapeMetrics(t, url)
		calls := fake.Calls()
		resp := compact(t, req)
		after := scrapeMetrics(t, url)
		rep := resp.GetReport()
		if !rep.GetCompacted() || len(rep.GetModelUsage()) == 0 {
			t.Fatalf("the compaction did not summarize with the model: %v", rep)
		}
		wantDelta(t, before, after, "ctxc_context_input_tokens_sum", compactMatch, float64(resp.GetBudgetBefore().GetUsedTokenCount()))
		wantDelta(t, before, after, "ctxc_context_output_tokens_sum", compactMatch, float64(resp.GetBudgetAfter().GetUsedTokenCount()))
		wantDelta(t, before, after, "ctxc_compactions_total", compactMatch, 1)
		wantDelta(t, before, after, "ctxc_pipeline_runs_total", with(compactMatch, "outcome", "ok"), 1)
		if d := delta(before, after, "ctxc_compaction_points_sum", compactMatch); d < 1 {
			t.Errorf("a compaction counted %v compaction points", d)
		}
		if d := delta(before, after, "ctxc_compaction_removed_tokens_total", compactMatch); d <= 0 {
			t.Errorf("a compaction from %d to %d tokens removed %v", resp.GetBudgetBefore().GetUsedTokenCount(), resp.GetBudgetAfter().GetUsedTokenCount(), d)
		}
		removed := 0.0
		for _, st := range rep.GetStages() {
			if !st.GetSkipped() && st.GetTokensIn() > st.GetTokensOut() {
				removed += float64(st.GetTokensIn() - st.GetTokensOut())
			}
		}
		wantDelta(t, before, after, "ctxc_stage_removed_tokens_total", llmCompact, removed)
		model := map[string]string{"task": "summarizer", "model": "gpt-4o-mini"}
		wantDelta(t, before, after, "ctxc_helper_model_calls_total", model, float64(fake.Calls()-calls))
		wantDelta(t, before, after, "ctxc_helper_model_failures_total", model, 0)
		u := rep.GetModelUsage()[0]
		wantDelta(t, before, after, "ctxc_helper_model_tokens_total", with(with(model, "profile", "llm-compact"), "type", "input"), float64(u.GetInputTokenCount()))
		wantDelta(t, before, after, "ctxc_helper_model_tokens_total", with(with(model, "profile", "llm-compact"), "type", "output"), float64(u.GetOutputTokenCount()))
		if got := delta(before, after, "ctxc_helper_model_cost_usd_total", llmCompact); rep.GetTotalCostUsd() <= 0 || math.Abs(got-rep.GetTotalCostUsd()) > 1e-12 {
			t.Errorf("cost moved by %v, the report says %v", got, rep.GetTotalCostUsd())
		}
		wantDelta(t, before, after, "ctxc_summary_cache_lookups_total", map[string]string{"backend": "memory", "result": "miss"}, float64(rep.GetCache().GetMissCount()))

		// The same compaction again is served by the summary cache.
		again := compact(t, req)
		cached := scrapeMetrics(t, url)
		if hits := again.GetReport().GetCache().GetHitCount(); hits == 0 {
			t.Fatalf("the second compaction missed the cache: %v", again.GetReport().GetCache())
		}
		wantDelta(t, after, cached, "ctxc_summary_cache_lookups_total", map[string]string{"backend": "memory", "result": "hit"}, float64(again.GetReport().GetCache().GetHitCount()))
		wantDelta(t, after, cached, "ctxc_summary_cache_errors_total", nil, 0)
	})

	t.Run("a failing summarizer degrades the step by its error kind, then trips the breaker", func(t *testing.T) {
		fake.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Status: 500} })
		model := map[string]string{"task": "summarizer", "model": "gpt-4o-mini"}
		degraded := func(reason string) map[string]string {
			return map[string]string{"profile": "llm-compact", "stage": "compact", "policy": "llm_summarize", "reason": reason}
		}
		before := scrapeMetrics(t, url)
		if open := before.sum("ctxc_helper_model_breaker_open", model); open != 0 {
			t.Fatalf("breaker open before any failure: %v", open)
		}
		// Two failed calls (max_retries 0) on changed content, which the cache cannot answer.
		for i := range 2 {
			req := readExample(t, "coding-agent.json")
			req.State.Context.Messages[3].Parts[0].GetToolResult().Content += fmt.Sprintf("\n(rerun %d)", i)
			resp := compact(t, req)
			if !degradedBy(resp.GetReport(), "llm_summarize") {
				t.Fatalf("rerun %d: llm_summarize did not degrade: %v", i, resp.GetReport().GetStages())
			}
		}
		failed := scrapeMetrics(t, url)
		wantDelta(t, before, failed, "ctxc_stage_degraded_total", degraded("model_server_error"), 2)
		wantDelta(t, before, failed, "ctxc_pipeline_runs_total", with(compactMatch, "outcome", "degraded"), 2)
		wantDelta(t, before, failed, "ctxc_helper_model_failures_total", model, 2)
		wantDelta(t, before, failed, "ctxc_helper_model_breaker_open", model, 1)

		// The breaker refuses the next call without asking the endpoint.
		calls := fake.Calls()
		req := readExample(t, "coding-agent.json")
		req.State.Context.Messages[3].Parts[0].GetToolResult().Content += "\n(rerun 2)"
		compact(t, req)
		open := scrapeMetrics(t, url)
		if fake.Calls() != calls {
			t.Errorf("the open breaker let %d calls through", fake.Calls()-calls)
		}
		wantDelta(t, failed, open, "ctxc_stage_degraded_total", degraded("model_breaker_open"), 1)
		wantDelta(t, failed, open, "ctxc_stage_degraded_total", degraded("model_server_error"), 0)
	})

	t.Run("refusals: an irreducible context and an unknown profile", func(t *testing.T) {
		before := scrapeMetrics(t, url)
		tiny := uint32(60)
		req := readExample(t, "coding-agent.json")
		_, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: req.GetState(), Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &tiny}})
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("a %d-token window: %v, want RESOURCE_EXHAUSTED", tiny, err)
		}
		_, err = client.Compile(ctx, &ctxcv1.CompileRequest{State: req.GetState(), Profile: "session-8f3a"})
		if status.Code(err) != codes.NotFound && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("unknown profile: %v", err)
		}
		after := scrapeMetrics(t, url)
		wantDelta(t, before, after, "ctxc_pipeline_runs_total", map[string]string{"method": "Compile", "profile": "pragmatic", "outcome": "irreducible"}, 1)
		wantDelta(t, before, after, "ctxc_pipeline_runs_total", map[string]string{"method": "Compile", "profile": "unknown", "outcome": "invalid"}, 1)
		wantDelta(t, before, after, "grpc_server_handled_total", map[string]string{"grpc_method": "Compile", "grpc_code": "ResourceExhausted"}, 1)
		for _, v := range after.labelValues("ctxc_pipeline_runs_total", "profile") {
			if v == "session-8f3a" {
				t.Error("a requested profile name the catalog lacks became a label value")
			}
		}
	})

	t.Run("repairs of a damaged log are counted by kind", func(t *testing.T) {
		st := &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{
			{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("Run the tests.")}},
			{Id: "t9", Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{result("call_gone", "run_tests", "ok", false)}},
			{Id: "a1", Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{text("They pass.")}},
		}}}
		before := scrapeMetrics(t, url)
		resp, err := client.Compile(ctx, &ctxcv1.CompileRequest{State: st})
		if err != nil {
			t.Fatal(err)
		}
		after := scrapeMetrics(t, url)
		kinds := map[string]float64{}
		for _, r := range resp.GetReport().GetRepairs() {
			kinds[r.GetKind()]++
		}
		if len(kinds) == 0 {
			t.Fatal("the orphan tool result was not repaired")
		}
		for kind, n := range kinds {
			wantDelta(t, before, after, "ctxc_repairs_total", with(pragmatic, "kind", kind), n)
		}
	})

	t.Run("route compacts when an execution ends (budget-aware)", func(t *testing.T) {
		before := scrapeMetrics(t, url)
		st := &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai"}}
		for _, in := range []*ctxcv1.RouteRequest{
			{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text("Fix the build.")}}}}}},
			{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP,
				Messages: []*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: []*ctxcv1.Part{text("Fixed: a missing import.")}}}}}},
		} {
			in.State, in.Profile = st, "budget-aware"
			resp, err := client.Route(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			st = resp.GetState()
		}
		after := scrapeMetrics(t, url)
		wantDelta(t, before, after, "ctxc_pipeline_runs_total", map[string]string{"method": "Route", "profile": "budget-aware"}, 1)
		wantDelta(t, before, after, "ctxc_context_output_tokens_count", map[string]string{"method": "Route", "profile": "budget-aware"}, 1)
	})

	t.Run("proxy: calls by outcome, upstream latency, tokens saved, compactions", func(t *testing.T) {
		base := "http://" + s.httpAddr(t)
		f := proxyFormats[0] // openai
		msgs, ends, _ := growingSession(12)
		short, long := clientBody(t, f, msgs[:ends[0]]), clientBody(t, f, msgs[:ends[len(ends)-1]])
		before := scrapeMetrics(t, url)
		first, _ := proxyPost(t, base, f, short, 0)
		second, _ := proxyPost(t, base, f, long, 3000)
		after := scrapeMetrics(t, url)
		if first.Header.Get("X-Ctxc-Forwarded") != "unchanged" || second.Header.Get("X-Ctxc-Forwarded") != "rewritten" || second.Header.Get("X-Ctxc-Compacted") != "true" {
			t.Fatalf("forwarded %q then %q (compacted %q)", first.Header.Get("X-Ctxc-Forwarded"), second.Header.Get("X-Ctxc-Forwarded"), second.Header.Get("X-Ctxc-Compacted"))
		}
		chat := map[string]string{"upstream": "openai", "endpoint": "chat_completions"}
		wantDelta(t, before, after, "ctxc_proxy_calls_total", with(chat, "outcome", "unchanged"), 1)
		wantDelta(t, before, after, "ctxc_proxy_calls_total", with(chat, "outcome", "rewritten"), 1)
		wantDelta(t, before, after, "ctxc_proxy_upstream_seconds_count", chat, 2)
		wantDelta(t, before, after, "ctxc_proxy_compactions_total", map[string]string{"upstream": "openai"}, 1)
		tokensBefore, _ := strconv.Atoi(second.Header.Get("X-Ctxc-Tokens-Before"))
		tokensAfter, _ := strconv.Atoi(second.Header.Get("X-Ctxc-Tokens-After"))
		wantDelta(t, before, after, "ctxc_proxy_saved_tokens_total", map[string]string{"upstream": "openai"}, float64(tokensBefore-tokensAfter))
		// The proxy's compiles are Compile calls like any other.
		wantDelta(t, before, after, "grpc_server_handled_total", map[string]string{"grpc_method": "Compile", "grpc_code": "OK"}, 2)
	})

	// What the rest reads: every series the calls above made.
	final := scrapeMetrics(t, url)
	t.Run("the dashboard queries only exposed metrics", func(t *testing.T) { checkDashboard(t, final) })
	t.Run("the alert rules query only exposed metrics", func(t *testing.T) { checkRuleNames(t, final) })
	t.Run("the README lists every exposed metric", func(t *testing.T) { checkReadmeMetrics(t, final) })
}

// wantDelta checks how far the sum of name's samples matching match moved.
func wantDelta(t *testing.T, before, after *scrape, name string, match map[string]string, want float64) {
	t.Helper()
	if got := delta(before, after, name, match); math.Abs(got-want) > 1e-9 {
		t.Errorf("%s%v moved by %v, want %v", name, match, got, want)
	}
}

// with is match with one more label.
func with(match map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range match {
		out[mk] = mv
	}
	return out
}

func degradedBy(rep *ctxcv1.CompileReport, policy string) bool {
	for _, st := range rep.GetStages() {
		if st.GetPolicy() == policy && st.GetDegraded() {
			return true
		}
	}
	return false
}

// TestMetricsExemplars: with tracing on, the histograms' buckets link to
// the trace of a call that landed in them (the caller's trace, continued by
// the server); with tracing off, none does.
func TestMetricsExemplars(t *testing.T) {
	t.Parallel()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	compile := func(t *testing.T, s *server) string {
		t.Helper()
		ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
		if _, err := s.client().Compile(ctx, readExample(t, "coding-agent.json")); err != nil {
			t.Fatal(err)
		}
		body, ct := getMetrics(t, s.metricsURL(t), "application/openmetrics-text; version=1.0.0")
		if !strings.HasPrefix(ct, "application/openmetrics-text") {
			t.Fatalf("content type %q, want OpenMetrics", ct)
		}
		return string(body)
	}
	t.Run("tracing on", func(t *testing.T) {
		s := startServerEnv(t, []string{"OTEL_TRACES_EXPORTER=console"}, "--metrics-listen", "127.0.0.1:0")
		body := compile(t, s)
		for _, family := range []string{"grpc_server_handling_seconds_bucket", "ctxc_stage_duration_seconds_bucket", "ctxc_context_output_tokens_bucket"} {
			found := false
			for _, line := range strings.Split(body, "\n") {
				if strings.HasPrefix(line, family+"{") && strings.Contains(line, `# {trace_id="`+traceID+`"}`) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s line carries the call's trace id as an exemplar", family)
			}
		}
	})
	t.Run("tracing off", func(t *testing.T) {
		s := startServer(t, "--metrics-listen", "127.0.0.1:0")
		if body := compile(t, s); strings.Contains(body, "trace_id") {
			t.Error("exemplars without tracing")
		}
	})
}

// TestAdmissionMetricsThroughTheBinary: while a Compact waits on its helper
// model, the real server reports that request's bytes in flight and counts
// a second call refused for max_concurrent_calls; once the first call ends,
// nothing is in flight.
func TestAdmissionMetricsThroughTheBinary(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	fake.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Delay: time.Minute} })
	s := startServer(t, "--config", llmConfig(t, fake.URL, "1m", 0, ""), "--metrics-listen", "127.0.0.1:0", "--max-concurrent-calls", "1")
	url := s.metricsURL(t)
	client := s.client()
	refused := map[string]string{"method": "Compile", "limit": "max_concurrent_calls"}
	before := scrapeMetrics(t, url)
	if before.sum("ctxc_inflight_request_bytes", nil) != 0 {
		t.Fatalf("%v bytes in flight before any call", before.sum("ctxc_inflight_request_bytes", nil))
	}

	window := uint32(2000)
	blocked := &ctxcv1.CompactRequest{State: readExample(t, "coding-agent.json").GetState(), Profile: "llm-compact",
		Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := client.Compact(ctx, blocked)
		done <- err
	}()
	waitFor(t, "the Compact to call its helper model", func() bool { return fake.Calls() > 0 })

	during := scrapeMetrics(t, url)
	// The request's bytes and what the pipeline builds for each message.
	if got, want := during.sum("ctxc_inflight_request_bytes", nil), float64(proto.Size(blocked)+adapter.WorkingBytesPerMessage*len(blocked.GetState().GetContext().GetMessages())); got != want {
		t.Errorf("%v bytes in flight while a %v-byte Compact of %d messages runs, want %v", got, proto.Size(blocked), len(blocked.GetState().GetContext().GetMessages()), want)
	}
	_, err := client.Compile(context.Background(), readExample(t, "coding-agent.json"))
	if !overloaded(err) {
		t.Fatalf("a second call beside a running one with max_concurrent_calls 1: %v, want OVERLOADED", err)
	}
	wantDelta(t, before, scrapeMetrics(t, url), "ctxc_admission_rejected_total", refused, 1)

	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Errorf("the canceled Compact: %v", err)
	}
	// The server sees the cancellation after the client does.
	waitFor(t, "the bytes in flight to return to 0", func() bool {
		return scrapeMetrics(t, url).sum("ctxc_inflight_request_bytes", nil) == 0
	})
	wantDelta(t, before, scrapeMetrics(t, url), "ctxc_admission_rejected_total", nil, 1)
}

// waitFor polls cond until it holds, failing the test after a generous
// while: for what another process does in its own time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
	}
}

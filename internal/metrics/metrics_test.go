package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// fakeClient is a helper-model client with fixed counters.
type fakeClient struct {
	model string
	stats llm.Stats
	open  bool
}

func (c fakeClient) Model() string     { return c.model }
func (c fakeClient) Stats() llm.Stats  { return c.stats }
func (c fakeClient) BreakerOpen() bool { return c.open }

type fakeTokenCache tokens.CacheStats

func (c fakeTokenCache) CacheStats() tokens.CacheStats { return tokens.CacheStats(c) }

type fakeSummaryCache summarycache.Stats

func (c fakeSummaryCache) Stats() summarycache.Stats { return summarycache.Stats(c) }
func (c fakeSummaryCache) Backend() string           { return "redis" }

func newMetrics(t *testing.T, cfg Config) (*Metrics, *prometheus.Registry) {
	t.Helper()
	if cfg.Profiles == nil {
		cfg.Profiles = []compiler.ProfileInfo{{Name: "coding"}, {Name: "chat"}}
	}
	reg := prometheus.NewRegistry()
	m, err := New(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// compare checks the named metrics' series that are not zero against want,
// in the text exposition format.
func compare(t *testing.T, reg *prometheus.Registry, want string, names ...string) {
	t.Helper()
	got, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	filtered := prometheus.NewPedanticRegistry()
	filtered.MustRegister(nonZero(got))
	if err := testutil.GatherAndCompare(filtered, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}

// nonZero re-exposes gathered families without the series still at zero
// (the ones New creates up front), so expectations list what moved.
type nonZero []*dto.MetricFamily

func (n nonZero) Describe(chan<- *prometheus.Desc) {}

func (n nonZero) Collect(ch chan<- prometheus.Metric) {
	for _, mf := range n {
		for _, m := range mf.GetMetric() {
			var labels []string
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
				labels = append(labels, l.GetValue())
			}
			desc := prometheus.NewDesc(mf.GetName(), mf.GetHelp(), names, nil)
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				if v := m.GetCounter().GetValue(); v != 0 {
					ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
				}
			case dto.MetricType_GAUGE:
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, m.GetGauge().GetValue(), labels...)
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				if h.GetSampleCount() == 0 {
					continue
				}
				buckets := map[float64]uint64{}
				for _, b := range h.GetBucket() {
					buckets[b.GetUpperBound()] = b.GetCumulativeCount()
				}
				ch <- prometheus.MustNewConstHistogram(desc, h.GetSampleCount(), h.GetSampleSum(), buckets, labels...)
			}
		}
	}
}

// TestObserveRun: the runs a use case reports move the metrics by what
// their reports say, with bounded labels (a profile the catalog lacks is
// "unknown", a helper model not configured is "other").
func TestObserveRun(t *testing.T) {
	m, reg := newMetrics(t, Config{HelperModels: []HelperModel{{Task: "summarizer", Client: fakeClient{model: "gpt-4o-mini"}}}})
	ctx := context.Background()
	compacted := &policies.Report{
		Profile:   "coding",
		Compacted: true,
		Compaction: policies.CompactionReport{Points: []policies.CompactionPoint{
			{Intake: true, TokensBefore: 9000, TokensAfter: 8000},
			{TokensBefore: 8500, TokensAfter: 3000},
			{TokensBefore: 4000, TokensAfter: 2500},
		}},
		Stages: []policies.StageReport{
			{Stage: "normalize", Policy: "normalize", DurationMicros: 300},
			{Stage: "estimate", Policy: "estimate", DurationMicros: 2000, TokensIn: 0, TokensOut: 9500},
			{Stage: "compact", Policy: "llm_summarize", DurationMicros: 1_500_000, TokensIn: 9500, TokensOut: 4000, Degraded: true,
				DegradedReason: fmt.Sprintf("llm_summarize: %v; used the deterministic summary", &llm.Error{Kind: llm.KindBreakerOpen, Model: "gpt-4o-mini", Attempts: 1, Err: errors.New("open")})},
			{Stage: "compact", Policy: "truncate", DurationMicros: 700, TokensIn: 4000, TokensOut: 4100, Skipped: true, Degraded: true,
				DegradedReason: "did not shrink the context (4000 -> 4100 tokens); reverted"},
			{Stage: "compact", Policy: "repair", Skipped: true},
		},
		Repairs: []policies.Repair{{Kind: policies.RepairOrphanResultDropped}, {Kind: policies.RepairOrphanResultDropped}, {Kind: policies.RepairEmptyPartRemoved}},
		ModelUsage: []policies.ModelUsage{
			{Task: "summarizer", Model: "gpt-4o-mini", Calls: 2, InputTokens: 1800, OutputTokens: 120, CostUSD: 0.25},
			{Task: "summarizer", Model: "a-model-from-an-answer", Calls: 1, InputTokens: 10, OutputTokens: 1, CostUSD: 0.5},
		},
	}
	m.ObserveRun(ctx, compiler.Run{UseCase: "Compact", Profile: "coding", Report: compacted,
		Before: &agentstate.Budget{Used: 9500}, After: &agentstate.Budget{Used: 2500}})
	m.ObserveRun(ctx, compiler.Run{UseCase: "Compile", Profile: "chat", Report: &policies.Report{Profile: "chat"},
		Before: &agentstate.Budget{Used: 100}, After: &agentstate.Budget{Used: 100}})
	m.ObserveRun(ctx, compiler.Run{UseCase: "Budget", Profile: "chat", Report: &policies.Report{Profile: "chat"}})
	m.ObserveRun(ctx, compiler.Run{UseCase: "Route", Profile: "coding", Err: fmt.Errorf("stage compact: %w", &agentstate.IrreducibleError{NeededTokens: 9, AvailableTokens: 5})})
	m.ObserveRun(ctx, compiler.Run{UseCase: "Compile", Profile: "", Err: &agentstate.UnknownProfileError{Name: "id-1234"}})
	m.ObserveRun(ctx, compiler.Run{UseCase: "Compile", Profile: "chat", Err: context.DeadlineExceeded})
	m.ObserveRun(ctx, compiler.Run{UseCase: "Compile", Profile: "chat", Err: &agentstate.UnavailableError{Backend: "summarizer model"}})
	m.ObserveRun(ctx, compiler.Run{UseCase: "Compile", Profile: "chat", Err: agentstate.ErrInvariant})

	compare(t, reg, `
# HELP ctxc_pipeline_runs_total Pipeline runs by RPC method, profile and outcome (ok, degraded, irreducible, invalid, unavailable, canceled, internal).
# TYPE ctxc_pipeline_runs_total counter
ctxc_pipeline_runs_total{method="Budget",outcome="ok",profile="chat"} 1
ctxc_pipeline_runs_total{method="Compact",outcome="degraded",profile="coding"} 1
ctxc_pipeline_runs_total{method="Compile",outcome="canceled",profile="chat"} 1
ctxc_pipeline_runs_total{method="Compile",outcome="internal",profile="chat"} 1
ctxc_pipeline_runs_total{method="Compile",outcome="invalid",profile="unknown"} 1
ctxc_pipeline_runs_total{method="Compile",outcome="ok",profile="chat"} 1
ctxc_pipeline_runs_total{method="Compile",outcome="unavailable",profile="chat"} 1
ctxc_pipeline_runs_total{method="Route",outcome="irreducible",profile="coding"} 1
# HELP ctxc_compactions_total Runs that compacted the context at one compaction point or more, by method and profile.
# TYPE ctxc_compactions_total counter
ctxc_compactions_total{method="Compact",profile="coding"} 1
# HELP ctxc_compaction_removed_tokens_total Tokens compaction points removed (tokens before minus after each point), by method, profile and kind.
# TYPE ctxc_compaction_removed_tokens_total counter
ctxc_compaction_removed_tokens_total{kind="event",method="Compact",profile="coding"} 7000
ctxc_compaction_removed_tokens_total{kind="intake",method="Compact",profile="coding"} 1000
# HELP ctxc_stage_removed_tokens_total Tokens pipeline steps removed from the context (tokens in minus out, when positive), by profile, stage and policy.
# TYPE ctxc_stage_removed_tokens_total counter
ctxc_stage_removed_tokens_total{policy="llm_summarize",profile="coding",stage="compact"} 5500
# HELP ctxc_stage_degraded_total Pipeline steps that fell back or were reverted, by profile, stage, policy and reason class.
# TYPE ctxc_stage_degraded_total counter
ctxc_stage_degraded_total{policy="llm_summarize",profile="coding",reason="model_breaker_open",stage="compact"} 1
ctxc_stage_degraded_total{policy="truncate",profile="coding",reason="not_shrunk",stage="compact"} 1
# HELP ctxc_repairs_total Structural repairs of the log (normalize), by profile and kind.
# TYPE ctxc_repairs_total counter
ctxc_repairs_total{kind="EMPTY_PART_REMOVED",profile="coding"} 1
ctxc_repairs_total{kind="ORPHAN_RESULT_DROPPED",profile="coding"} 2
# HELP ctxc_helper_model_tokens_total Tokens of successful helper-model calls, by profile, task, model and type (input, output).
# TYPE ctxc_helper_model_tokens_total counter
ctxc_helper_model_tokens_total{model="gpt-4o-mini",profile="coding",task="summarizer",type="input"} 1800
ctxc_helper_model_tokens_total{model="gpt-4o-mini",profile="coding",task="summarizer",type="output"} 120
ctxc_helper_model_tokens_total{model="other",profile="coding",task="summarizer",type="input"} 10
ctxc_helper_model_tokens_total{model="other",profile="coding",task="summarizer",type="output"} 1
# HELP ctxc_helper_model_cost_usd_total Cost in US dollars of successful helper-model calls at the model registry's prices, by profile, task and model.
# TYPE ctxc_helper_model_cost_usd_total counter
ctxc_helper_model_cost_usd_total{model="gpt-4o-mini",profile="coding",task="summarizer"} 0.25
ctxc_helper_model_cost_usd_total{model="other",profile="coding",task="summarizer"} 0.5
`, "ctxc_pipeline_runs_total", "ctxc_compactions_total", "ctxc_compaction_removed_tokens_total", "ctxc_stage_removed_tokens_total",
		"ctxc_stage_degraded_total", "ctxc_repairs_total", "ctxc_helper_model_tokens_total", "ctxc_helper_model_cost_usd_total")

	// Histograms: one observation per run that produced a context, and per
	// executed step (the reverted one ran; the skipped one did not).
	counts := map[string]uint64{}
	sums := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		for _, s := range mf.GetMetric() {
			if h := s.GetHistogram(); h != nil && h.GetSampleCount() > 0 {
				key := mf.GetName() + labelString(s)
				counts[key], sums[key] = h.GetSampleCount(), h.GetSampleSum()
			}
		}
	}
	wantCounts := map[string]uint64{
		`ctxc_context_input_tokens{method="Compact",profile="coding"}`:                         1,
		`ctxc_context_input_tokens{method="Compile",profile="chat"}`:                           1,
		`ctxc_context_output_tokens{method="Compact",profile="coding"}`:                        1,
		`ctxc_context_output_tokens{method="Compile",profile="chat"}`:                          1,
		`ctxc_compaction_points{kind="event",method="Compact",profile="coding"}`:               1,
		`ctxc_compaction_points{kind="intake",method="Compact",profile="coding"}`:              1,
		`ctxc_compaction_points{kind="event",method="Compile",profile="chat"}`:                 1,
		`ctxc_compaction_points{kind="intake",method="Compile",profile="chat"}`:                1,
		`ctxc_stage_duration_seconds{policy="normalize",profile="coding",stage="normalize"}`:   1,
		`ctxc_stage_duration_seconds{policy="estimate",profile="coding",stage="estimate"}`:     1,
		`ctxc_stage_duration_seconds{policy="llm_summarize",profile="coding",stage="compact"}`: 1,
		`ctxc_stage_duration_seconds{policy="truncate",profile="coding",stage="compact"}`:      1,
	}
	wantSums := map[string]float64{
		`ctxc_context_input_tokens{method="Compact",profile="coding"}`:                         9500,
		`ctxc_context_output_tokens{method="Compact",profile="coding"}`:                        2500,
		`ctxc_compaction_points{kind="event",method="Compact",profile="coding"}`:               2,
		`ctxc_compaction_points{kind="intake",method="Compact",profile="coding"}`:              1,
		`ctxc_stage_duration_seconds{policy="llm_summarize",profile="coding",stage="compact"}`: 1.5,
	}
	for k, want := range wantCounts {
		if counts[k] != want {
			t.Errorf("%s: %d observations, want %d", k, counts[k], want)
		}
		delete(counts, k)
	}
	for k := range counts {
		t.Errorf("%s: unexpected observations", k)
	}
	for k, want := range wantSums {
		if sums[k] != want {
			t.Errorf("%s: sum %v, want %v", k, sums[k], want)
		}
	}
}

func labelString(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestNewInitializesAlertSeries: the series that alerts and ratios divide
// by exist at zero from the start, for every profile.
func TestNewInitializesAlertSeries(t *testing.T) {
	_, reg := newMetrics(t, Config{})
	for _, series := range []string{
		`ctxc_pipeline_runs_total{method="Compile",outcome="irreducible",profile="chat"}`,
		`ctxc_pipeline_runs_total{method="Route",outcome="ok",profile="coding"}`,
		`ctxc_compactions_total{method="Compile",profile="coding"}`,
		`ctxc_compaction_removed_tokens_total{kind="intake",method="Compact",profile="chat"}`,
	} {
		name, _, _ := strings.Cut(series, "{")
		if !hasSeries(t, reg, name, series) {
			t.Errorf("no series %s at start", series)
		}
	}
}

func hasSeries(t *testing.T, reg *prometheus.Registry, name, series string) bool {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		for _, s := range mf.GetMetric() {
			if mf.GetName() == name && name+labelString(s) == series {
				return true
			}
		}
	}
	return false
}

// TestExemplars: a traced request's observations carry its trace id; an
// untraced one's carry none.
func TestExemplars(t *testing.T) {
	m, reg := newMetrics(t, Config{})
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(context.Background(), "Compile")
	defer span.End()
	run := func(profile string) compiler.Run {
		return compiler.Run{UseCase: "Compile", Profile: profile, Report: &policies.Report{Profile: profile,
			Stages: []policies.StageReport{{Stage: "normalize", Policy: "normalize", DurationMicros: 10}}},
			Before: &agentstate.Budget{Used: 50_000}, After: &agentstate.Budget{Used: 1000}}
	}
	m.ObserveRun(ctx, run("coding"))
	// A span context without a recording span (tracing off, a client's traceparent).
	remote := trace.ContextWithSpanContext(context.Background(), span.SpanContext())
	m.ObserveRun(remote, run("chat"))

	want := span.SpanContext().TraceID().String()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	for _, mf := range families {
		for _, s := range mf.GetMetric() {
			for _, b := range s.GetHistogram().GetBucket() {
				ex := b.GetExemplar()
				if ex == nil {
					continue
				}
				if got := ex.GetLabel()[0].GetValue(); ex.GetLabel()[0].GetName() != "trace_id" || got != want {
					t.Errorf("%s%s: exemplar %v, want trace_id %s", mf.GetName(), labelString(s), ex.GetLabel(), want)
				}
				found[mf.GetName()+labelString(s)]++
			}
		}
	}
	for _, series := range []string{
		`ctxc_context_input_tokens{method="Compile",profile="coding"}`,
		`ctxc_context_output_tokens{method="Compile",profile="coding"}`,
		`ctxc_stage_duration_seconds{policy="normalize",profile="coding",stage="normalize"}`,
	} {
		if found[series] != 1 {
			t.Errorf("%s: %d exemplars, want 1", series, found[series])
		}
	}
	for series := range found {
		if strings.Contains(series, `"chat"`) {
			t.Errorf("%s: an exemplar from a request that is not traced", series)
		}
	}
}

// TestServices: the shared services' own counters are exposed as they are
// when scraped.
func TestServices(t *testing.T) {
	_, reg := newMetrics(t, Config{
		TokenCache:    fakeTokenCache{Hits: 90, Misses: 10, Entries: 10, Capacity: 200_000},
		SummaryCache:  fakeSummaryCache{Hits: 3, Misses: 4, Errors: 2},
		ScheduleCache: fakeScheduleCache{Hits: 8, Misses: 2, Evictions: 1, Entries: 3, Bytes: 4096},
		HelperModels: []HelperModel{
			{Task: "planner", Client: fakeClient{model: "gpt-4o-mini", stats: llm.Stats{Calls: 5, Failures: 1, Retries: 2}}},
			{Task: "summarizer", Client: fakeClient{model: "llama3.2", stats: llm.Stats{Calls: 7, Failures: 7}, open: true}},
		},
	})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ctxc_token_cache_lookups_total Token-count cache lookups by result (hit: a count served from the cache; miss: a content tokenized).
# TYPE ctxc_token_cache_lookups_total counter
ctxc_token_cache_lookups_total{result="hit"} 90
ctxc_token_cache_lookups_total{result="miss"} 10
# HELP ctxc_token_cache_entries Counts the token-count cache holds.
# TYPE ctxc_token_cache_entries gauge
ctxc_token_cache_entries 10
# HELP ctxc_token_cache_capacity Counts the token-count cache may hold (token_cache_entries).
# TYPE ctxc_token_cache_capacity gauge
ctxc_token_cache_capacity 200000
# HELP ctxc_summary_cache_lookups_total Summary cache lookups by backend (memory, redis) and result (hit, miss).
# TYPE ctxc_summary_cache_lookups_total counter
ctxc_summary_cache_lookups_total{backend="redis",result="hit"} 3
ctxc_summary_cache_lookups_total{backend="redis",result="miss"} 4
# HELP ctxc_summary_cache_errors_total Summary cache backend failures (each also a miss), by backend.
# TYPE ctxc_summary_cache_errors_total counter
ctxc_summary_cache_errors_total{backend="redis"} 2
# HELP ctxc_schedule_cache_lookups_total Schedule cache lookups of stateless compiles that replay compaction points, by result (hit: resumed where an earlier compile of the log stood; miss: replayed from the start).
# TYPE ctxc_schedule_cache_lookups_total counter
ctxc_schedule_cache_lookups_total{result="hit"} 8
ctxc_schedule_cache_lookups_total{result="miss"} 2
# HELP ctxc_schedule_cache_bytes Bytes of compaction-schedule progress the schedule cache holds (at most schedule_cache_bytes).
# TYPE ctxc_schedule_cache_bytes gauge
ctxc_schedule_cache_bytes 4096
# HELP ctxc_schedule_cache_entries Snapshots of compaction-schedule progress the schedule cache holds.
# TYPE ctxc_schedule_cache_entries gauge
ctxc_schedule_cache_entries 3
# HELP ctxc_schedule_cache_evictions_total Snapshots the schedule cache dropped, least recently used first, to stay within schedule_cache_bytes.
# TYPE ctxc_schedule_cache_evictions_total counter
ctxc_schedule_cache_evictions_total 1
# HELP ctxc_helper_model_calls_total Helper-model calls (each with its retries), by task and model.
# TYPE ctxc_helper_model_calls_total counter
ctxc_helper_model_calls_total{model="gpt-4o-mini",task="planner"} 5
ctxc_helper_model_calls_total{model="llama3.2",task="summarizer"} 7
# HELP ctxc_helper_model_failures_total Helper-model calls that failed after their retries, by task and model.
# TYPE ctxc_helper_model_failures_total counter
ctxc_helper_model_failures_total{model="gpt-4o-mini",task="planner"} 1
ctxc_helper_model_failures_total{model="llama3.2",task="summarizer"} 7
# HELP ctxc_helper_model_retries_total Helper-model requests retried after a retryable failure, by task and model.
# TYPE ctxc_helper_model_retries_total counter
ctxc_helper_model_retries_total{model="gpt-4o-mini",task="planner"} 2
ctxc_helper_model_retries_total{model="llama3.2",task="summarizer"} 0
# HELP ctxc_helper_model_breaker_open 1 while the circuit breaker of the helper model's endpoint refuses calls, else 0; by task and model.
# TYPE ctxc_helper_model_breaker_open gauge
ctxc_helper_model_breaker_open{model="gpt-4o-mini",task="planner"} 0
ctxc_helper_model_breaker_open{model="llama3.2",task="summarizer"} 1
`), "ctxc_token_cache_lookups_total", "ctxc_token_cache_entries", "ctxc_token_cache_capacity", "ctxc_summary_cache_lookups_total",
		"ctxc_summary_cache_errors_total", "ctxc_schedule_cache_lookups_total", "ctxc_schedule_cache_bytes", "ctxc_schedule_cache_entries",
		"ctxc_schedule_cache_evictions_total", "ctxc_helper_model_calls_total", "ctxc_helper_model_failures_total",
		"ctxc_helper_model_retries_total", "ctxc_helper_model_breaker_open"); err != nil {
		t.Error(err)
	}
	// Without the services, their metrics are not exposed at all.
	_, bare := newMetrics(t, Config{})
	if n, err := testutil.GatherAndCount(bare, "ctxc_token_cache_lookups_total", "ctxc_summary_cache_lookups_total", "ctxc_schedule_cache_lookups_total", "ctxc_helper_model_calls_total"); err != nil || n != 0 {
		t.Errorf("without services: %d series, %v", n, err)
	}
}

// TestAdmission: refusals are counted by API method (anything else is
// "other") and limit (an unlisted one is "other"), every method and limit
// from zero; in-flight bytes go up and down.
func TestAdmission(t *testing.T) {
	m, reg := newMetrics(t, Config{Methods: []string{"Compile", "CountTokens"}, AdmissionLimits: []string{"max_concurrent_calls", "max_inflight_bytes"}})
	a := m.Admission()
	a.Rejected("/ctxc.v1.ContextCompilerService/Compile", "max_concurrent_calls")
	a.Rejected("Compile", "max_concurrent_calls")
	a.Rejected("/ctxc.v1.ContextCompilerService/CountTokens", "max_inflight_bytes")
	a.Rejected("/some.Other/Method-with-an-id-42", "max_concurrent_calls")
	a.Rejected("Compile", "a limit added later")
	a.AddInflightBytes(3 << 20)
	a.AddInflightBytes(1 << 20)
	a.AddInflightBytes(-(3 << 20))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ctxc_admission_rejected_total API calls admission control refused, by method and the limit reached (its configuration key).
# TYPE ctxc_admission_rejected_total counter
ctxc_admission_rejected_total{limit="max_concurrent_calls",method="Compile"} 2
ctxc_admission_rejected_total{limit="max_concurrent_calls",method="CountTokens"} 0
ctxc_admission_rejected_total{limit="max_concurrent_calls",method="other"} 1
ctxc_admission_rejected_total{limit="max_inflight_bytes",method="Compile"} 0
ctxc_admission_rejected_total{limit="max_inflight_bytes",method="CountTokens"} 1
ctxc_admission_rejected_total{limit="other",method="Compile"} 1
# HELP ctxc_inflight_request_bytes Bytes of the API requests admitted and still being worked on.
# TYPE ctxc_inflight_request_bytes gauge
ctxc_inflight_request_bytes 1.048576e+06
`), "ctxc_admission_rejected_total", "ctxc_inflight_request_bytes"); err != nil {
		t.Error(err)
	}
}

// TestNewRefusesASecondRegistration: metrics registered twice on one
// registry is a wiring mistake, reported, not a panic.
func TestNewRefusesASecondRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(reg, Config{}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg, Config{}); err == nil {
		t.Error("a second New on the same registry succeeded")
	}
}

// TestProxy: the proxy's calls, upstream latency, tokens saved and
// compactions, by the configured upstreams and endpoints only (anything else
// is "other"); without an upstream, no proxy metric is exposed at all.
func TestProxy(t *testing.T) {
	m, reg := newMetrics(t, Config{ProxyEndpoints: map[string][]string{"anthropic": {"messages", "count_tokens"}}, ProxyOutcomes: []string{"unchanged", "rewritten"}})
	p := m.Proxy()
	p.Proxied("anthropic", "messages", "unchanged")
	p.Proxied("anthropic", "messages", "rewritten")
	p.Proxied("anthropic", "messages", "rewritten")
	p.Proxied("anthropic", "batches", "unchanged")
	p.Proxied("openai", "chat_completions", "refused")
	p.UpstreamAnswered("anthropic", "messages", 300*time.Millisecond)
	p.Compiled("anthropic", 12000, 5000, true)
	p.Compiled("anthropic", 4000, 4000, false)
	compare(t, reg, `
# HELP ctxc_proxy_calls_total Proxied calls by upstream, endpoint and outcome (unchanged, rewritten, uncompiled, refused, upstream_failed).
# TYPE ctxc_proxy_calls_total counter
ctxc_proxy_calls_total{endpoint="messages",outcome="rewritten",upstream="anthropic"} 2
ctxc_proxy_calls_total{endpoint="messages",outcome="unchanged",upstream="anthropic"} 1
ctxc_proxy_calls_total{endpoint="other",outcome="unchanged",upstream="anthropic"} 1
ctxc_proxy_calls_total{endpoint="other",outcome="other",upstream="other"} 1
# HELP ctxc_proxy_saved_tokens_total Tokens compilation took out of the contexts forwarded (tokens before minus after, by ctxc's count), by upstream.
# TYPE ctxc_proxy_saved_tokens_total counter
ctxc_proxy_saved_tokens_total{upstream="anthropic"} 7000
# HELP ctxc_proxy_compactions_total Forwarded contexts that were compacted, by upstream.
# TYPE ctxc_proxy_compactions_total counter
ctxc_proxy_compactions_total{upstream="anthropic"} 1
`, "ctxc_proxy_calls_total", "ctxc_proxy_saved_tokens_total", "ctxc_proxy_compactions_total")
	if n := testutil.CollectAndCount(m.proxy.upstream); n != 2 {
		t.Errorf("%d upstream latency series, want one per endpoint", n)
	}

	_, none := newMetrics(t, Config{})
	families, err := none.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "ctxc_proxy_") {
			t.Errorf("%s exposed without a proxy upstream", f.GetName())
		}
	}
}

// fakeScheduleCache reports fixed counts.
type fakeScheduleCache pipeline.ScheduleCacheStats

func (f fakeScheduleCache) Stats() pipeline.ScheduleCacheStats { return pipeline.ScheduleCacheStats(f) }

// TestQuotaMetricsByCaller: refusals at a quota and calls in flight are
// counted by caller, the caller label bounded: "anonymous" for calls without
// authentication, the first MaxCallerLabels callers by name, the rest
// "other", each caller keeping its label.
func TestQuotaMetricsByCaller(t *testing.T) {
	m, reg := newMetrics(t, Config{Quotas: []string{"max_concurrent_calls", "max_inflight_bytes", "calls_per_second"}})
	a := m.Admission()
	for i := range MaxCallerLabels - 1 {
		a.AddCallerCalls(fmt.Sprintf("filler-%03d", i), 0)
	}
	a.QuotaRefused("team-a", "max_concurrent_calls")
	a.QuotaRefused("team-a", "max_concurrent_calls")
	a.QuotaRefused("", "calls_per_second")
	a.QuotaRefused("team-b", "max_inflight_bytes") // the 101st caller
	a.AddCallerCalls("team-a", 2)
	a.AddCallerCalls("team-b", 1)
	a.AddCallerCalls("team-c", 1)
	a.AddCallerCalls("team-c", -1)
	a.AddCallerCalls("", 1)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch f.GetName() {
			case "ctxc_quota_rejected_total":
				if !strings.Contains(key, "filler-") {
					got[key] = metric.GetCounter().GetValue()
				}
			case "ctxc_caller_inflight_calls":
				if !strings.Contains(key, "filler-") {
					got[key] = metric.GetGauge().GetValue()
				}
			}
		}
	}
	// Every label's series start at zero: a first refusal is an increase.
	want := map[string]float64{
		"ctxc_quota_rejected_total{caller=team-a,quota=max_concurrent_calls}":    2,
		"ctxc_quota_rejected_total{caller=team-a,quota=max_inflight_bytes}":      0,
		"ctxc_quota_rejected_total{caller=team-a,quota=calls_per_second}":        0,
		"ctxc_quota_rejected_total{caller=anonymous,quota=calls_per_second}":     1,
		"ctxc_quota_rejected_total{caller=anonymous,quota=max_concurrent_calls}": 0,
		"ctxc_quota_rejected_total{caller=anonymous,quota=max_inflight_bytes}":   0,
		"ctxc_quota_rejected_total{caller=other,quota=max_inflight_bytes}":       1,
		"ctxc_quota_rejected_total{caller=other,quota=max_concurrent_calls}":     0,
		"ctxc_quota_rejected_total{caller=other,quota=calls_per_second}":         0,
		"ctxc_caller_inflight_calls{caller=team-a}":                              2,
		"ctxc_caller_inflight_calls{caller=other}":                               1, // team-b, and team-c came and went
		"ctxc_caller_inflight_calls{caller=anonymous}":                           1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics by caller (-want +got):\n%s", diff)
	}
}

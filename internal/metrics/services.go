package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/contextcompiler/ctxc/internal/llm"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/internal/tokens"
)

// TokenCache is the token-count cache's view metrics reads.
type TokenCache interface {
	CacheStats() tokens.CacheStats
}

// SummaryCache is the summary cache's view metrics reads.
type SummaryCache interface {
	Stats() summarycache.Stats
	Backend() string
}

// StateRefs is the state-reference store's view metrics reads (its counts,
// as adapter/stateref keeps them; metrics does not import the adapter's
// packages).
type StateRefs interface {
	Stats() StateRefStats
}

// StateRefStats are a state-reference store's counts since start.
type StateRefStats struct {
	Hits, Misses, DroppedWrites int64
	Entries                     int
	Bytes                       int64
}

// ScheduleCache is the schedule cache's view metrics reads.
type ScheduleCache interface {
	Stats() pipeline.ScheduleCacheStats
}

// HelperModel is one configured helper-model client.
type HelperModel struct {
	// Task is what the client is configured for: "planner" or "summarizer"
	// (the config file's models section).
	Task   string
	Client HelperClient
}

// HelperClient is the helper-model client's view metrics reads (*llm.Client).
type HelperClient interface {
	Model() string
	Stats() llm.Stats
	BreakerOpen() bool
}

// services reads, at scrape time, the counters the shared services keep
// themselves: nothing is counted twice, and the hot paths (a token-count
// lookup) pay no more than the services already do.
type services struct {
	cfg Config

	tokenLookups, tokenEntries, tokenCapacity                     *prometheus.Desc
	summaryLookups, summaryErrors                                 *prometheus.Desc
	refLookups, refBytes, refEntries, refDropped                  *prometheus.Desc
	scheduleLookups, scheduleBytes, scheduleEntries, scheduleOut  *prometheus.Desc
	helperCalls, helperFailures, helperRetries, helperBreakerOpen *prometheus.Desc
}

func newServices(cfg Config) *services {
	return &services{
		cfg: cfg,
		tokenLookups: prometheus.NewDesc("ctxc_token_cache_lookups_total",
			"Token-count cache lookups by result (hit: a count served from the cache; miss: a content tokenized).", []string{"result"}, nil),
		tokenEntries:  prometheus.NewDesc("ctxc_token_cache_entries", "Counts the token-count cache holds.", nil, nil),
		tokenCapacity: prometheus.NewDesc("ctxc_token_cache_capacity", "Counts the token-count cache may hold (token_cache_entries).", nil, nil),
		summaryLookups: prometheus.NewDesc("ctxc_summary_cache_lookups_total",
			"Summary cache lookups by backend (memory, redis) and result (hit, miss).", []string{"backend", "result"}, nil),
		summaryErrors: prometheus.NewDesc("ctxc_summary_cache_errors_total",
			"Summary cache backend failures (each also a miss), by backend.", []string{"backend"}, nil),
		refLookups: prometheus.NewDesc("ctxc_state_ref_lookups_total",
			"base_state_ref lookups by result (hit: resolved from memory or Redis; miss: answered STATE_REF_NOT_FOUND, the client sent the whole state).", []string{"result"}, nil),
		refBytes:   prometheus.NewDesc("ctxc_state_ref_bytes", "Bytes (on the wire) of the states kept in memory for references (at most state_refs.max_bytes).", nil, nil),
		refEntries: prometheus.NewDesc("ctxc_state_ref_entries", "States kept in memory for references.", nil, nil),
		refDropped: prometheus.NewDesc("ctxc_state_ref_dropped_writes_total",
			"Whole states not written to Redis because the writes waiting passed their bound (their references resolve on this replica only).", nil, nil),
		scheduleLookups: prometheus.NewDesc("ctxc_schedule_cache_lookups_total",
			"Schedule cache lookups of stateless compiles that replay compaction points, by result (hit: resumed where an earlier compile of the log stood; miss: replayed from the start).", []string{"result"}, nil),
		scheduleBytes:   prometheus.NewDesc("ctxc_schedule_cache_bytes", "Bytes of compaction-schedule progress the schedule cache holds (at most schedule_cache_bytes).", nil, nil),
		scheduleEntries: prometheus.NewDesc("ctxc_schedule_cache_entries", "Snapshots of compaction-schedule progress the schedule cache holds.", nil, nil),
		scheduleOut: prometheus.NewDesc("ctxc_schedule_cache_evictions_total",
			"Snapshots the schedule cache dropped, least recently used first, to stay within schedule_cache_bytes.", nil, nil),
		helperCalls: prometheus.NewDesc("ctxc_helper_model_calls_total",
			"Helper-model calls (each with its retries), by task and model.", []string{"task", "model"}, nil),
		helperFailures: prometheus.NewDesc("ctxc_helper_model_failures_total",
			"Helper-model calls that failed after their retries, by task and model.", []string{"task", "model"}, nil),
		helperRetries: prometheus.NewDesc("ctxc_helper_model_retries_total",
			"Helper-model requests retried after a retryable failure, by task and model.", []string{"task", "model"}, nil),
		helperBreakerOpen: prometheus.NewDesc("ctxc_helper_model_breaker_open",
			"1 while the circuit breaker of the helper model's endpoint refuses calls, else 0; by task and model.", []string{"task", "model"}, nil),
	}
}

func (s *services) Describe(ch chan<- *prometheus.Desc) {
	if s.cfg.TokenCache != nil {
		ch <- s.tokenLookups
		ch <- s.tokenEntries
		ch <- s.tokenCapacity
	}
	if s.cfg.SummaryCache != nil {
		ch <- s.summaryLookups
		ch <- s.summaryErrors
	}
	if s.cfg.StateRefs != nil {
		ch <- s.refLookups
		ch <- s.refBytes
		ch <- s.refEntries
		ch <- s.refDropped
	}
	if s.cfg.ScheduleCache != nil {
		ch <- s.scheduleLookups
		ch <- s.scheduleBytes
		ch <- s.scheduleEntries
		ch <- s.scheduleOut
	}
	if len(s.cfg.HelperModels) > 0 {
		ch <- s.helperCalls
		ch <- s.helperFailures
		ch <- s.helperRetries
		ch <- s.helperBreakerOpen
	}
}

func (s *services) Collect(ch chan<- prometheus.Metric) {
	if c := s.cfg.TokenCache; c != nil {
		st := c.CacheStats()
		ch <- prometheus.MustNewConstMetric(s.tokenLookups, prometheus.CounterValue, float64(st.Hits), "hit")
		ch <- prometheus.MustNewConstMetric(s.tokenLookups, prometheus.CounterValue, float64(st.Misses), "miss")
		ch <- prometheus.MustNewConstMetric(s.tokenEntries, prometheus.GaugeValue, float64(st.Entries))
		ch <- prometheus.MustNewConstMetric(s.tokenCapacity, prometheus.GaugeValue, float64(st.Capacity))
	}
	if c := s.cfg.SummaryCache; c != nil {
		st, backend := c.Stats(), c.Backend()
		ch <- prometheus.MustNewConstMetric(s.summaryLookups, prometheus.CounterValue, float64(st.Hits), backend, "hit")
		ch <- prometheus.MustNewConstMetric(s.summaryLookups, prometheus.CounterValue, float64(st.Misses), backend, "miss")
		ch <- prometheus.MustNewConstMetric(s.summaryErrors, prometheus.CounterValue, float64(st.Errors), backend)
	}
	if r := s.cfg.StateRefs; r != nil {
		st := r.Stats()
		ch <- prometheus.MustNewConstMetric(s.refLookups, prometheus.CounterValue, float64(st.Hits), "hit")
		ch <- prometheus.MustNewConstMetric(s.refLookups, prometheus.CounterValue, float64(st.Misses), "miss")
		ch <- prometheus.MustNewConstMetric(s.refBytes, prometheus.GaugeValue, float64(st.Bytes))
		ch <- prometheus.MustNewConstMetric(s.refEntries, prometheus.GaugeValue, float64(st.Entries))
		ch <- prometheus.MustNewConstMetric(s.refDropped, prometheus.CounterValue, float64(st.DroppedWrites))
	}
	if c := s.cfg.ScheduleCache; c != nil {
		st := c.Stats()
		ch <- prometheus.MustNewConstMetric(s.scheduleLookups, prometheus.CounterValue, float64(st.Hits), "hit")
		ch <- prometheus.MustNewConstMetric(s.scheduleLookups, prometheus.CounterValue, float64(st.Misses), "miss")
		ch <- prometheus.MustNewConstMetric(s.scheduleBytes, prometheus.GaugeValue, float64(st.Bytes))
		ch <- prometheus.MustNewConstMetric(s.scheduleEntries, prometheus.GaugeValue, float64(st.Entries))
		ch <- prometheus.MustNewConstMetric(s.scheduleOut, prometheus.CounterValue, float64(st.Evictions))
	}
	for _, h := range s.cfg.HelperModels {
		st, model := h.Client.Stats(), h.Client.Model()
		open := 0.0
		if h.Client.BreakerOpen() {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(s.helperCalls, prometheus.CounterValue, float64(st.Calls), h.Task, model)
		ch <- prometheus.MustNewConstMetric(s.helperFailures, prometheus.CounterValue, float64(st.Failures), h.Task, model)
		ch <- prometheus.MustNewConstMetric(s.helperRetries, prometheus.CounterValue, float64(st.Retries), h.Task, model)
		ch <- prometheus.MustNewConstMetric(s.helperBreakerOpen, prometheus.GaugeValue, open, h.Task, model)
	}
}

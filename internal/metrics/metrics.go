package metrics

import (
	"context"
	"errors"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextcompiler/ctxc/internal/compiler"
)

// Label values that stand in for whatever is not in a bounded set.
const (
	unknownProfile = "unknown"
	otherValue     = "other"
)

// Buckets. Token counts span a short chat to a 2M-token window; stage
// durations a microsecond-scale read-only stage to a helper-model call.
var (
	tokenBuckets    = prometheus.ExponentialBuckets(128, 2, 15) // 128 .. 2,097,152
	durationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	pointBuckets    = []float64{0, 1, 2, 4, 8, 16, 32, 64}
)

// Config says what the metrics describe. Everything but Profiles is
// optional: a source left out exposes no metrics.
type Config struct {
	// Version is the build's version, for ctxc_build_info.
	Version string
	// Profiles are the catalog's profiles: the profile label's values.
	Profiles []compiler.ProfileInfo
	// Methods are the API's RPC method names (Compile, CountTokens, ...):
	// the method label's values for admission control.
	Methods []string
	// AdmissionLimits are the limits admission control refuses calls for
	// (server.AdmissionLimits): the limit label's values.
	AdmissionLimits []string
	// Quotas are the quotas per caller calls are refused for
	// (server.QuotaNames): the quota label's values.
	Quotas []string
	// TokenCache is the process-wide token-count cache (*tokens.Service).
	TokenCache TokenCache
	// SummaryCache is the cache of LLM-written summaries (*summarycache.Cache).
	SummaryCache SummaryCache
	// StateRefs is the store of states calls name by reference (*stateref.Store).
	StateRefs StateRefs
	// ScheduleCache is the compaction schedule's progress kept across
	// stateless compiles (*pipeline.ScheduleCache).
	ScheduleCache ScheduleCache
	// HelperModels are the configured helper-model clients.
	HelperModels []HelperModel
	// ProxyEndpoints are the proxy's configured upstreams, each with the
	// names of its endpoints, and ProxyOutcomes the outcomes of a proxied
	// call (server/proxy): the label values of the proxy's metrics, which
	// exist only when an upstream is configured.
	ProxyEndpoints map[string][]string
	ProxyOutcomes  []string
}

// Metrics holds the domain metrics. It is a compiler.RunObserver; Admission
// is the seam for admission control. Safe for concurrent use.
type Metrics struct {
	profiles     map[string]bool
	helperModels map[string]bool

	runs              *prometheus.CounterVec
	inputTokens       *prometheus.HistogramVec
	outputTokens      *prometheus.HistogramVec
	compactions       *prometheus.CounterVec
	compactionPoints  *prometheus.HistogramVec
	compactionRemoved *prometheus.CounterVec
	stageDuration     *prometheus.HistogramVec
	stageRemoved      *prometheus.CounterVec
	stageDegraded     *prometheus.CounterVec
	repairs           *prometheus.CounterVec
	helperTokens      *prometheus.CounterVec
	helperCost        *prometheus.CounterVec

	admission *Admission
	proxy     *Proxy
}

var _ compiler.RunObserver = (*Metrics)(nil)

// New builds the metrics and registers them, with the collectors of the
// services cfg names, on reg.
func New(reg prometheus.Registerer, cfg Config) (*Metrics, error) {
	m := &Metrics{profiles: map[string]bool{}, helperModels: map[string]bool{}}
	for _, p := range cfg.Profiles {
		m.profiles[p.Name] = true
	}
	for _, h := range cfg.HelperModels {
		m.helperModels[h.Client.Model()] = true
	}
	m.runs = counterVec("ctxc_pipeline_runs_total",
		"Pipeline runs by RPC method, profile and outcome (ok, degraded, irreducible, invalid, unavailable, canceled, internal).",
		"method", "profile", "outcome")
	m.inputTokens = histogramVec("ctxc_context_input_tokens", tokenBuckets,
		"Tokens of the context a run was given (the first budget, before planning and compaction), by method and profile.",
		"method", "profile")
	m.outputTokens = histogramVec("ctxc_context_output_tokens", tokenBuckets,
		"Tokens of the context a run produced (the budget of what is sent or persisted), by method and profile.",
		"method", "profile")
	m.compactions = counterVec("ctxc_compactions_total",
		"Runs that compacted the context at one compaction point or more, by method and profile.",
		"method", "profile")
	m.compactionPoints = histogramVec("ctxc_compaction_points", pointBuckets,
		"Compaction points per run, by method, profile and kind (intake: in-place edits of messages leaving the recency window; event: the transforms towards the target).",
		"method", "profile", "kind")
	m.compactionRemoved = counterVec("ctxc_compaction_removed_tokens_total",
		"Tokens compaction points removed (tokens before minus after each point), by method, profile and kind.",
		"method", "profile", "kind")
	m.stageDuration = histogramVec("ctxc_stage_duration_seconds", durationBuckets,
		"Duration of each executed pipeline step, by profile, stage and policy.",
		"profile", "stage", "policy")
	m.stageRemoved = counterVec("ctxc_stage_removed_tokens_total",
		"Tokens pipeline steps removed from the context (tokens in minus out, when positive), by profile, stage and policy.",
		"profile", "stage", "policy")
	m.stageDegraded = counterVec("ctxc_stage_degraded_total",
		"Pipeline steps that fell back or were reverted, by profile, stage, policy and reason class.",
		"profile", "stage", "policy", "reason")
	m.repairs = counterVec("ctxc_repairs_total",
		"Structural repairs of the log (normalize), by profile and kind.",
		"profile", "kind")
	m.helperTokens = counterVec("ctxc_helper_model_tokens_total",
		"Tokens of successful helper-model calls, by profile, task, model and type (input, output).",
		"profile", "task", "model", "type")
	m.helperCost = counterVec("ctxc_helper_model_cost_usd_total",
		"Cost in US dollars of successful helper-model calls at the model registry's prices, by profile, task and model.",
		"profile", "task", "model")
	m.admission = newAdmission(cfg.Methods, cfg.AdmissionLimits)
	m.admission.quotas = cfg.Quotas
	m.proxy = newProxy(cfg.ProxyEndpoints, cfg.ProxyOutcomes)
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ctxc_build_info",
		Help: "Always 1; the labels say which build runs.",
	}, []string{"version", "goversion"})
	build.WithLabelValues(cfg.Version, runtime.Version()).Set(1)

	collectors := []prometheus.Collector{m.runs, m.inputTokens, m.outputTokens, m.compactions, m.compactionPoints, m.compactionRemoved,
		m.stageDuration, m.stageRemoved, m.stageDegraded, m.repairs, m.helperTokens, m.helperCost,
		m.admission.rejected, m.admission.inflight, m.admission.unauthenticated, m.admission.quotaRejected, m.admission.callerCalls, build, newServices(cfg)}
	if len(cfg.ProxyEndpoints) > 0 {
		collectors = append(collectors, m.proxy.collectors()...)
	}
	var errs []error
	for _, c := range collectors {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	m.initialize(cfg.Profiles)
	return m, nil
}

// initialize creates the series alerts and ratios divide by, at zero, so
// that the first event of a kind is an increase and not a new series.
func (m *Metrics) initialize(profiles []compiler.ProfileInfo) {
	for _, p := range profiles {
		for _, method := range []string{compiler.UseCaseCompile, compiler.UseCaseBudget, compiler.UseCaseCompact, compiler.UseCaseRoute} {
			for _, o := range outcomes {
				m.runs.WithLabelValues(method, p.Name, o)
			}
			if method == compiler.UseCaseBudget {
				continue
			}
			m.compactions.WithLabelValues(method, p.Name)
			for _, kind := range []string{pointIntake, pointEvent} {
				m.compactionRemoved.WithLabelValues(method, p.Name, kind)
			}
		}
	}
}

// counterVec is a counter with the label names given.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// histogramVec is a histogram with the buckets and label names given.
func histogramVec(name string, buckets []float64, help string, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// Admission is the seam admission control reports to.
func (m *Metrics) Admission() *Admission { return m.admission }

// Proxy is what the provider-compatible proxy reports to.
func (m *Metrics) Proxy() *Proxy { return m.proxy }

// profile is the profile label of a run: the catalog's name, else "unknown".
func (m *Metrics) profile(name string) string {
	if m.profiles[name] {
		return name
	}
	return unknownProfile
}

// helperModel is the model label of a helper-model call: a configured model,
// else "other".
func (m *Metrics) helperModel(name string) string {
	if m.helperModels[name] {
		return name
	}
	return otherValue
}

// TraceExemplar is the exemplar that links an observation to the trace of
// the request in ctx: its trace id, when the request's span is recorded and
// sampled (tracing is on); nil otherwise.
func TraceExemplar(ctx context.Context) prometheus.Labels {
	span := trace.SpanFromContext(ctx)
	sc := span.SpanContext()
	if !span.IsRecording() || !sc.IsSampled() {
		return nil
	}
	return prometheus.Labels{"trace_id": sc.TraceID().String()}
}

// observe records v on h, with the exemplar when there is one.
func observe(h prometheus.Observer, v float64, exemplar prometheus.Labels) {
	if eo, ok := h.(prometheus.ExemplarObserver); ok && exemplar != nil {
		eo.ObserveWithExemplar(v, exemplar)
		return
	}
	h.Observe(v)
}

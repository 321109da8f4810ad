package metrics

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Admission counts what admission control does: the calls it refuses and
// the bytes of the requests it has let in and that are still being worked
// on. The gRPC transport reports to it (server.AdmissionObserver); it holds
// no limits of its own. Safe for concurrent use.
type Admission struct {
	methods, limits map[string]bool
	rejected        *prometheus.CounterVec
	inflight        prometheus.Gauge
	unauthenticated *prometheus.CounterVec
	quotaRejected   *prometheus.CounterVec
	callerCalls     *prometheus.GaugeVec

	quotas []string // the quota label's values

	mu      sync.Mutex
	callers map[string]bool // the callers with a label of their own
	labeled map[string]bool // the caller labels whose series exist
}

// MaxCallerLabels bounds the caller label's values: the first callers seen
// get their own, the callers after them share "other"; calls without
// authentication are "anonymous".
const MaxCallerLabels = 100

// anonymousCaller is the caller label of calls without authentication.
const anonymousCaller = "anonymous"

// UnauthenticatedPorts are the values of ctxc_unauthenticated_total's port
// label: where a request without a valid token was refused.
var UnauthenticatedPorts = []string{"grpc", "http", "metrics"}

// newAdmission builds the admission metrics, with a refusal count at zero
// for every method and limit, so that a first refusal is an increase.
func newAdmission(methods, limits []string) *Admission {
	a := &Admission{
		methods: map[string]bool{},
		limits:  map[string]bool{},
		rejected: counterVec("ctxc_admission_rejected_total",
			"API calls admission control refused, by method and the limit reached (its configuration key).",
			"method", "limit"),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ctxc_inflight_request_bytes",
			Help: "Bytes of the API requests admitted and still being worked on.",
		}),
		unauthenticated: counterVec("ctxc_unauthenticated_total",
			"Requests refused for want of a valid bearer token or client certificate, by port (grpc, http, metrics).",
			"port"),
		quotaRejected: counterVec("ctxc_quota_rejected_total",
			"API calls refused because their caller was at one of its quotas, by caller and quota (its configuration key).",
			"caller", "quota"),
		callerCalls: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ctxc_caller_inflight_calls",
			Help: "API calls in flight, by caller.",
		}, []string{"caller"}),
		callers: map[string]bool{},
		labeled: map[string]bool{},
	}
	for _, p := range UnauthenticatedPorts {
		a.unauthenticated.WithLabelValues(p)
	}
	for _, m := range methods {
		a.methods[m] = true
	}
	for _, l := range limits {
		a.limits[l] = true
	}
	for _, m := range methods {
		for _, l := range limits {
			a.rejected.WithLabelValues(m, l)
		}
	}
	return a
}

// Rejected counts a call to method (the RPC's name, or its full
// "/package.Service/Method" name) refused because limit was reached.
func (a *Admission) Rejected(method, limit string) {
	if !a.limits[limit] {
		limit = otherValue
	}
	a.rejected.WithLabelValues(a.method(method), limit).Inc()
}

// Unauthenticated counts a request refused on port (one of
// UnauthenticatedPorts; another counts as the last) for want of credentials.
func (a *Admission) Unauthenticated(port string) {
	if !slices.Contains(UnauthenticatedPorts, port) {
		port = UnauthenticatedPorts[len(UnauthenticatedPorts)-1]
	}
	a.unauthenticated.WithLabelValues(port).Inc()
}

// AddInflightBytes adds delta (negative when a call ends) to the bytes in flight.
func (a *Admission) AddInflightBytes(delta int64) {
	a.inflight.Add(float64(delta))
}

// method is the method label: an API method's name, else "other".
func (a *Admission) method(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if a.methods[name] {
		return name
	}
	return otherValue
}

// QuotaRefused counts a call of caller ("" without authentication) refused
// at quota.
func (a *Admission) QuotaRefused(caller, quota string) {
	a.quotaRejected.WithLabelValues(a.caller(caller), quota).Inc()
}

// AddCallerCalls adds delta to caller's calls in flight.
func (a *Admission) AddCallerCalls(caller string, delta int) {
	a.callerCalls.WithLabelValues(a.caller(caller)).Add(float64(delta))
}

// caller is the caller label: "anonymous" for "", the caller's name for the
// first MaxCallerLabels callers seen, else "other". A caller keeps the label
// it was first given. A label's series start at zero when it is first
// given, so that a caller's first refusal is an increase.
func (a *Admission) caller(name string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	label := name
	switch {
	case name == "":
		label = anonymousCaller
	case a.callers[name]:
	case len(a.callers) >= MaxCallerLabels:
		label = otherValue
	default:
		a.callers[name] = true
	}
	if !a.labeled[label] {
		a.labeled[label] = true
		for _, q := range a.quotas {
			a.quotaRejected.WithLabelValues(label, q)
		}
		a.callerCalls.WithLabelValues(label)
	}
	return label
}

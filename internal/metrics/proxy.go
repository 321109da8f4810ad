package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// upstreamBuckets span a local model's first byte to a long reasoning
// model's: seconds until the upstream's response headers.
var upstreamBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Proxy counts what the provider-compatible proxy does: calls by upstream,
// endpoint and outcome, the upstreams' latency, the tokens compilation saved
// and the calls it compacted. The proxy reports to it (server/proxy's
// Observer); labels come only from the configured upstreams, their endpoints
// and the proxy's outcomes. Safe for concurrent use.
type Proxy struct {
	endpoints map[string]map[string]bool
	outcomes  map[string]bool

	calls       *prometheus.CounterVec
	upstream    *prometheus.HistogramVec
	saved       *prometheus.CounterVec
	compactions *prometheus.CounterVec
}

// newProxy builds the proxy's metrics, every series of the configured
// upstreams (upstream name to its endpoint names) at zero.
func newProxy(endpoints map[string][]string, outcomes []string) *Proxy {
	p := &Proxy{
		endpoints: map[string]map[string]bool{},
		outcomes:  map[string]bool{},
		calls: counterVec("ctxc_proxy_calls_total",
			"Proxied calls by upstream, endpoint and outcome (unchanged, rewritten, uncompiled, refused, upstream_failed).",
			"upstream", "endpoint", "outcome"),
		upstream: histogramVec("ctxc_proxy_upstream_seconds", upstreamBuckets,
			"Seconds from sending a proxied call to the upstream's response headers, by upstream and endpoint.",
			"upstream", "endpoint"),
		saved: counterVec("ctxc_proxy_saved_tokens_total",
			"Tokens compilation took out of the contexts forwarded (tokens before minus after, by ctxc's count), by upstream.",
			"upstream"),
		compactions: counterVec("ctxc_proxy_compactions_total",
			"Forwarded contexts that were compacted, by upstream.",
			"upstream"),
	}
	for _, o := range outcomes {
		p.outcomes[o] = true
	}
	for u, eps := range endpoints {
		p.endpoints[u] = map[string]bool{}
		p.saved.WithLabelValues(u)
		p.compactions.WithLabelValues(u)
		for _, ep := range eps {
			p.endpoints[u][ep] = true
			p.upstream.WithLabelValues(u, ep)
			for _, o := range outcomes {
				p.calls.WithLabelValues(u, ep, o)
			}
		}
	}
	return p
}

func (p *Proxy) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.calls, p.upstream, p.saved, p.compactions}
}

// labels are an upstream and endpoint as labels: configured ones, else "other".
func (p *Proxy) labels(upstream, endpoint string) (string, string) {
	eps, ok := p.endpoints[upstream]
	if !ok {
		return otherValue, otherValue
	}
	if !eps[endpoint] {
		endpoint = otherValue
	}
	return upstream, endpoint
}

// Proxied counts a call.
func (p *Proxy) Proxied(upstream, endpoint, outcome string) {
	u, ep := p.labels(upstream, endpoint)
	if !p.outcomes[outcome] {
		outcome = otherValue
	}
	p.calls.WithLabelValues(u, ep, outcome).Inc()
}

// UpstreamAnswered records the time to the upstream's response headers.
func (p *Proxy) UpstreamAnswered(upstream, endpoint string, d time.Duration) {
	u, ep := p.labels(upstream, endpoint)
	p.upstream.WithLabelValues(u, ep).Observe(d.Seconds())
}

// Compiled records what the compile of a forwarded call took out.
func (p *Proxy) Compiled(upstream string, before, after int, compacted bool) {
	u, _ := p.labels(upstream, "")
	if before > after {
		p.saved.WithLabelValues(u).Add(float64(before - after))
	}
	if compacted {
		p.compactions.WithLabelValues(u).Inc()
	}
}

package server

import (
	"github.com/prometheus/client_golang/prometheus"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/metrics"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/internal/service/proxy"
)

// metrics builds ctxc's domain metrics over the engine's profiles and shared
// services, registered on reg. The tokenizers must be loaded.
func (e *engine) metrics(reg prometheus.Registerer) (*metrics.Metrics, error) {
	tok, err := e.tokens.load()
	if err != nil {
		return nil, err
	}
	var methods []string
	for _, m := range ctxcv1.ContextCompilerService_ServiceDesc.Methods {
		methods = append(methods, m.MethodName)
	}
	var schedules metrics.ScheduleCache // none when schedule_cache_bytes is 0: no series
	if e.schedules != nil {
		schedules = e.schedules
	}
	return metrics.New(reg, metrics.Config{Version: e.version, Profiles: e.catalog.Profiles(), Methods: methods, AdmissionLimits: service.AdmissionLimits(), Quotas: service.QuotaNames(),
		TokenCache: tok, SummaryCache: e.cache, StateRefs: stateRefStats{e.refs}, ScheduleCache: schedules, HelperModels: e.helpers,
		ProxyEndpoints: e.proxyEndpoints, ProxyOutcomes: proxy.Outcomes()})
}

// proxyEndpoints are the configured upstreams with their endpoints' names.
func proxyEndpoints(cfg ProxyConfig) map[string][]string {
	out := map[string][]string{}
	for u := range cfg.upstreams() {
		seen := map[string]bool{}
		for _, ep := range proxy.Endpoints() {
			if ep.Upstream == u && !seen[ep.Name] {
				seen[ep.Name] = true
				out[string(u)] = append(out[string(u)], ep.Name)
			}
		}
	}
	return out
}

// stateRefStats shows the state-reference store's counts to metrics.
type stateRefStats struct{ s *stateref.Store }

func (r stateRefStats) Stats() metrics.StateRefStats {
	st := r.s.Stats()
	return metrics.StateRefStats{Hits: st.Hits, Misses: st.Misses, DroppedWrites: st.DroppedWrites, Entries: st.Entries, Bytes: st.Bytes}
}

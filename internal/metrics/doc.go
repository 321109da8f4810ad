// Package metrics owns ctxc's domain metrics, exposed in Prometheus format
// beside the gRPC server's and the Go runtime's: what every pipeline run did
// (tokens in and out, compaction, stage durations, degradations by reason
// class, repairs, helper-model tokens and cost), read from the run's
// policies.Report through compiler.RunObserver; the counters the
// process-wide services keep themselves (the token-count cache, the summary
// cache, the helper-model clients and their breakers), read at scrape time;
// the admission seam the gRPC transport reports refusals and in-flight
// bytes to; and what the provider-compatible proxy reports of its calls
// (outcomes, upstream latency, tokens saved, compactions).
//
// Every label is bounded: profiles come from the catalog built at start,
// stages and policies from its profiles, methods from the API, reasons and
// kinds from fixed lists, helper models from the configuration; anything
// else is counted under "unknown" or "other". Histograms carry the
// request's trace id as an exemplar when the request is traced. The metrics
// table of docs/metrics.md lists every metric, and a test keeps it true.
package metrics

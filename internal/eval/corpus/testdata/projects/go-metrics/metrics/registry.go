// Package metrics keeps request counters and latency histograms for an HTTP service.
package metrics

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// Histogram counts observations into fixed latency buckets.
type Histogram struct {
	bounds []time.Duration
	counts []uint64
}

// NewHistogram returns a histogram with the given upper bounds (ascending).
func NewHistogram(bounds ...time.Duration) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// Observe records one latency.
func (h *Histogram) Observe(d time.Duration) {
	i := sort.Search(len(h.bounds), func(i int) bool { return d <= h.bounds[i] })
	h.counts[i]++
}

// Registry holds the counters and histograms of one service.
type Registry struct {
	mu       sync.Mutex
	counters map[string]uint64
	latency  map[string]*Histogram
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{counters: map[string]uint64{}, latency: map[string]*Histogram{}}
}

// Inc adds one to the named counter.
func (r *Registry) Inc(name string) {
	r.mu.Lock()
	r.counters[name]++
	r.mu.Unlock()
}

// Observe records a request latency for route.
func (r *Registry) Observe(route string, d time.Duration) {
	r.mu.Lock()
	h, ok := r.latency[route]
	if !ok {
		h = NewHistogram(10*time.Millisecond, 50*time.Millisecond, 250*time.Millisecond, time.Second)
		r.latency[route] = h
	}
	r.mu.Unlock()
	h.Observe(d)
}

// Count returns the value of a counter.
func (r *Registry) Count(name string) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counters[name]
}

// Total returns how many latencies were observed for route.
func (r *Registry) Total(route string) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.latency[route]
	if !ok {
		return 0
	}
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// WriteText writes the metrics in a Prometheus-like text format.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.counters))
	for n := range r.counters {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := fmt.Fprintf(w, "%s %d\n", n, r.counters[n]); err != nil {
			return err
		}
	}
	return nil
}

// Package window implements a sliding-window request counter keyed by client.
package window

import (
	"sort"
	"sync"
	"time"
)

// Counter counts events per key over the last Size duration.
type Counter struct {
	mu     sync.Mutex
	size   time.Duration
	limit  int
	events map[string][]time.Time
}

// New returns a counter allowing limit events per key within size.
func New(size time.Duration, limit int) *Counter {
	return &Counter{size: size, limit: limit, events: map[string][]time.Time{}}
}

// Hit records an event for key at t and reports whether it is within the limit.
func (c *Counter) Hit(key string, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	evs := c.prune(key, t)
	if len(evs) >= c.limit {
		return false
	}
	c.events[key] = append(evs, t)
	return true
}

// prune drops the events of key older than the window. Callers hold mu.
func (c *Counter) prune(key string, t time.Time) []time.Time {
	evs := c.events[key]
	cut := t.Add(-c.size)
	i := sort.Search(len(evs), func(i int) bool { return evs[i].After(cut) })
	evs = evs[i:]
	c.events[key] = evs
	return evs
}

// Count returns how many events key has in the window ending at t.
func (c *Counter) Count(key string, t time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.prune(key, t))
}

// Remaining returns how many more events key may have in the window ending at t.
func (c *Counter) Remaining(key string, t time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.limit - len(c.prune(key, t)) + 1
	if n < 0 {
		return 0
	}
	return n
}

// Forget drops every event recorded for key.
func (c *Counter) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.events, key)
}

// Keys returns the keys that have events in the window ending at t, sorted.
func (c *Counter) Keys(t time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []string
	for k := range c.events {
		if len(c.prune(k, t)) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

package metrics

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestIncConcurrent(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				r.Inc("http_requests_total")
			}
		}()
	}
	wg.Wait()
	if got := r.Count("http_requests_total"); got != 800 {
		t.Fatalf("Count = %d, want 800", got)
	}
}

func TestObserveConcurrent(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				r.Observe("/v1/orders", time.Duration(i*j)*time.Millisecond)
			}
		}(i)
	}
	wg.Wait()
	if got := r.Total("/v1/orders"); got != 200 {
		t.Errorf("Total = %d, want 200", got)
	}
}

func TestWriteText(t *testing.T) {
	r := NewRegistry()
	r.Inc("b_total")
	r.Inc("a_total")
	r.Inc("a_total")
	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	if want := "a_total 2\nb_total 1\n"; sb.String() != want {
		t.Errorf("WriteText = %q, want %q", sb.String(), want)
	}
}

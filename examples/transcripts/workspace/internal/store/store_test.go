package store

import "testing"

func TestTotal(t *testing.T) {
	got := Total(Stream([]Invoice{{"INV-1", 1200}, {"INV-2", 300}}))
	if got != 1500 {
		t.Fatalf("Total = %d, want 1500", got)
	}
}

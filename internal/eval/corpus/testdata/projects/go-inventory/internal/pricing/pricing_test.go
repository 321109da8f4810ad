package pricing

import "testing"

func TestLineTotal(t *testing.T) {
	rules := Rules{{MinQty: 100, Percent: 5}, {MinQty: 1000, Percent: 12}}
	for _, tc := range []struct {
		qty  int
		want int64
	}{{10, 120}, {100, 1140}, {1000, 10560}} {
		if got := LineTotal(12, tc.qty, rules); got != tc.want {
			t.Errorf("LineTotal(12, %d) = %d, want %d", tc.qty, got, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	if got := Format(-1205, "EUR"); got != "EUR -12.05" {
		t.Errorf("Format(-1205) = %q", got)
	}
}

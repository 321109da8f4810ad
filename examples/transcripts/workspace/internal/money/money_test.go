package money

import "testing"

func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		cents, pct, want int64
	}{
		{1000, 15, 150},
		{1999, 15, 300},
		{5, 50, 3},
	} {
		if got := Percent(tt.cents, tt.pct); got != tt.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", tt.cents, tt.pct, got, tt.want)
		}
	}
}

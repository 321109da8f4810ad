package bounds

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMessages: each check passes a value within its bounds and names the
// key and the value of one outside them, in the words the configs' errors
// have always had (tests and docs quote them); NaN is outside any interval.
func TestMessages(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"at least, equal", AtLeast("max_entries", 1, 1), ""},
		{"at least, below", AtLeast("context_window", 511, 512), "context_window: 511 is less than 512"},
		{"not negative, zero", NotNegative("target_tokens", 0), ""},
		{"not negative, below", NotNegative("target_tokens", -1), "target_tokens: -1 is negative"},
		{"not negative, a ratio below", NotNegative("thresholds.expensive_input_per_mtok", -0.5), "thresholds.expensive_input_per_mtok: -0.5 is negative"},
		{"positive, one", Positive("max_messages", 1), ""},
		{"positive, zero", Positive("max_messages", 0), "max_messages: 0 must be positive"},
		{"positive, a duration", Positive("ttl", time.Duration(0)), "ttl: 0s must be positive"},
		{"positive, a negative duration", Positive("ttl", -90*time.Second), "ttl: -1m30s must be positive"},
		{"closed, at each end", firstErr(Closed("head_ratio", 0.0, 0, 1), Closed("head_ratio", 1.0, 0, 1)), ""},
		{"closed, above", Closed("head_ratio", 1.5, 0, 1), "head_ratio: 1.5 must be in [0, 1]"},
		{"closed, a fraction for a bound", Closed("fallback_reserve", 0.95, 0, 0.9), "fallback_reserve: 0.95 must be in [0, 0.9]"},
		{"closed, counts", Closed("min_importance_threshold", 0, 1, 101), "min_importance_threshold: 0 must be in [1, 101]"},
		{"closed, NaN", Closed("head_ratio", math.NaN(), 0, 1), "head_ratio: NaN must be in [0, 1]"},
		{"left open, the upper end", LeftOpen("target_ratio", 1.0, 0, 1), ""},
		{"left open, the lower end", LeftOpen("target_ratio", 0.0, 0, 1), "target_ratio: 0 must be in (0, 1]"},
		{"left open, above", LeftOpen("max_summary_ratio", 2.5, 0, 2), "max_summary_ratio: 2.5 must be in (0, 2]"},
		{"left open, NaN", LeftOpen("target_ratio", math.NaN(), 0, 1), "target_ratio: NaN must be in (0, 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if tt.err != nil {
				got = tt.err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

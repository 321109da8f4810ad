// Package bounds checks a configuration's numbers against their bounds, in
// the words every config's Validate uses: each check returns nil when the
// value is within bounds, else an error naming the key and the value
// ("head_ratio: 1.5 must be in [0, 1]"), so that a Validate lists its checks
// in one errors.Join, which drops the nils and keeps the order.
package bounds

import "fmt"

// Number is what a config bounds: counts, ratios and durations (a
// time.Duration prints as one: "0s must be positive").
type Number interface {
	~int | ~int64 | ~float64
}

// AtLeast: "key: v is less than min".
func AtLeast[T Number](key string, v, min T) error {
	if v < min {
		return fmt.Errorf("%s: %v is less than %v", key, v, min)
	}
	return nil
}

// NotNegative: "key: v is negative".
func NotNegative[T Number](key string, v T) error {
	if v < 0 {
		return fmt.Errorf("%s: %v is negative", key, v)
	}
	return nil
}

// Positive: "key: v must be positive".
func Positive[T Number](key string, v T) error {
	if v <= 0 {
		return fmt.Errorf("%s: %v must be positive", key, v)
	}
	return nil
}

// Closed: "key: v must be in [lo, hi]". A ratio that is NaN is in no
// interval.
func Closed[T Number](key string, v, lo, hi T) error {
	if !(v >= lo && v <= hi) {
		return fmt.Errorf("%s: %v must be in [%v, %v]", key, v, lo, hi)
	}
	return nil
}

// LeftOpen: "key: v must be in (lo, hi]".
func LeftOpen[T Number](key string, v, lo, hi T) error {
	if !(v > lo && v <= hi) {
		return fmt.Errorf("%s: %v must be in (%v, %v]", key, v, lo, hi)
	}
	return nil
}

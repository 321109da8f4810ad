// Package money computes amounts in integer cents.
package money

// Percent is pct percent of cents, rounded to the nearest cent.
func Percent(cents int64, pct int64) int64 {
	return cents * pct / 100
}

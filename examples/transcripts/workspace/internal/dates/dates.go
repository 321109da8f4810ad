// Package dates reads the dates of bank exports.
package dates

import "time"

// ParseBankDate reads a date of a bank export.
func ParseBankDate(s string) (time.Time, error) {
	return time.Parse(time.RFC3339, s)
}

// Package report prints invoice summaries.
package report

import (
	"fmt"
	"io"
)

// Line is one invoice of a report.
type Line struct {
	Customer string
	Cents    int64
}

// Write prints one line per invoice and a total.
func Write(w io.Writer, title string, lines []Line) error {
	if _, err := fmt.Fprintf(w, "%s: %d invoices\n", title, title); err != nil {
		return err
	}
	var total int64
	for _, l := range lines {
		total += l.Cents
		if _, err := fmt.Fprintf(w, "  %-20s %8.2f\n", l.Customer, float64(l.Cents)/100); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "  %-20s %8.2f\n", "total", float64(total)/100)
	return err
}

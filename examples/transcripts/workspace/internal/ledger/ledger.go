// Package ledger keeps each customer's balance in cents.
package ledger

import "example.com/invoicer/internal/counter"

// Ledger is the balances of every customer.
type Ledger struct {
	balances map[string]int64
	issued   counter.Counter
}

// Charge adds an invoice of cents to customer's balance.
func (l *Ledger) Charge(customer string, cents int64) {
	l.balances[customer] += cents
	l.issued.Inc()
}

// Balance is customer's balance.
func (l *Ledger) Balance(customer string) int64 {
	return l.balances[customer]
}

// Snapshot copies the issued counter for a report.
func Snapshot(c counter.Counter) int {
	return c.Value()
}

// Package pricing computes discounted prices and taxes for order lines.
package pricing

import (
	"fmt"
	"math"
)

// Rule is a quantity discount: from MinQty units on, Percent off.
type Rule struct {
	MinQty  int
	Percent float64
}

// Rules must be sorted by MinQty ascending.
type Rules []Rule

// DiscountFor returns the discount percentage that applies to qty units.
func (r Rules) DiscountFor(qty int) float64 {
	pct := 0.0
	for _, rule := range r {
		if qty >= rule.MinQty {
			pct = rule.Percent
		}
	}
	return pct
}

// LineTotal returns the price in cents of qty units at unitCts, after discount.
func LineTotal(unitCts int64, qty int, rules Rules) int64 {
	gross := float64(unitCts) * float64(qty)
	net := gross * (1 - rules.DiscountFor(qty)/100)
	return net
}

// WithVAT adds VAT at rate (e.g. 0.2) to cents and rounds half away from zero.
func WithVAT(cents int64, rate float64) int64 {
	return int64(math.Round(float64(cents) * (1 + rate)))
}

// Format renders cents as a decimal amount with a currency code.
func Format(cents int64, currency string) string {
	return fmt.Sprintf("%s %d.%02d", currency, cents/100, abs(cents%100))
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Package store streams stored invoices to consumers.
package store

// Invoice is one stored invoice.
type Invoice struct {
	ID    string
	Cents int64
}

// Stream sends every invoice on a channel.
func Stream(invoices []Invoice) <-chan Invoice {
	ch := make(chan Invoice)
	go func() {
		for _, inv := range invoices {
			ch <- inv
		}
	}()
	return ch
}

// Total sums what Stream sends.
func Total(ch <-chan Invoice) int64 {
	var total int64
	for inv := range ch {
		total += inv.Cents
	}
	return total
}

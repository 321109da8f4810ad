// Package counter counts invoices as they are issued.
package counter

// Counter counts issued invoices; it is shared by the issuing goroutines.
type Counter struct {
	n int
}

// Inc counts one more invoice.
func (c *Counter) Inc() {
	c.n++
}

// Value is the number counted so far.
func (c *Counter) Value() int {
	return c.n
}

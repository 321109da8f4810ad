package ledger

import "strings"

// Account is a node of the chart of accounts ("assets:bank:checking").
type Account struct {
	Name   string
	Parent *Account
}

// Chart is the chart of accounts.
type Chart struct {
	byName map[string]*Account
}

// NewChart builds a chart from full account names, creating parents.
func NewChart(names ...string) *Chart {
	c := &Chart{byName: map[string]*Account{}}
	for _, n := range names {
		c.add(n)
	}
	return c
}

func (c *Chart) add(name string) *Account {
	if a, ok := c.byName[name]; ok {
		return a
	}
	a := &Account{Name: name}
	if i := strings.LastIndex(name, ":"); i > 0 {
		a.Parent = c.add(name[:i])
	}
	c.byName[name] = a
	return a
}

// Lookup returns the account with that name, or nil.
func (c *Chart) Lookup(name string) *Account { return c.byName[name] }

// TopLevel returns the root category of an account ("assets" for "assets:bank").
func (c *Chart) TopLevel(name string) string {
	a := c.Lookup(name)
	for a.Parent != nil {
		a = a.Parent
	}
	return a.Name
}

// Rollup sums balances per top-level category.
func (c *Chart) Rollup(b *Book) map[string]int64 {
	out := map[string]int64{}
	for _, name := range b.Accounts() {
		out[c.TopLevel(name)] += b.Balance(name)
	}
	return out
}

package ledger

import (
	"fmt"
	"sort"
)

// Book holds account balances.
type Book struct {
	balances map[string]int64
}

// NewBook returns an empty book.
func NewBook() *Book {
	return &Book{balances: map[string]int64{}}
}

// Post books entries.
func (b *Book) Post(entries ...Entry) {
	for _, e := range entries {
		b.balances[e.Account] += e.Amount
	}
}

// Balance returns an account's balance in cents.
func (b *Book) Balance(account string) int64 { return b.balances[account] }

// Accounts returns the account names, sorted.
func (b *Book) Accounts() []string {
	names := make([]string, 0, len(b.balances))
	for a := range b.balances {
		names = append(names, a)
	}
	sort.Strings(names)
	return names
}

// Merge returns a new book with the balances of b and other added up.
func (b *Book) Merge(other *Book) *Book {
	out := &Book{}
	for a, v := range b.balances {
		out.balances[a] += v
	}
	for a, v := range other.balances {
		out.balances[a] += v
	}
	return out
}

// CheckBalanced groups entries by transaction and returns an error for the
// first transaction whose postings do not sum to zero.
func CheckBalanced(entries []Entry) error {
	sums := map[string]int64{}
	var order []string
	for _, e := range entries {
		if _, ok := sums[e.Txn]; !ok {
			order = append(order, e.Txn)
		}
		sums[e.Txn] += e.Amount
	}
	for _, txn := range order {
		if sums[txn] != 0 {
			return fmt.Errorf("transaction %s is off by %s", txn, FormatCents(sums[txn]))
		}
	}
	return nil
}

// MustBalance panics if a transaction is unbalanced; used by -strict imports.
func MustBalance(entries []Entry) {
	if err := CheckBalanced(entries); err != nil {
		panic(fmt.Sprintf("ledger: refusing unbalanced journal: %v", err))
	}
}

// FormatCents renders cents as a signed decimal.
func FormatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

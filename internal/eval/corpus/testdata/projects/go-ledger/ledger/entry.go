// Package ledger reads double-entry bookkeeping journals and computes balances.
package ledger

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Entry is one posting: an amount (in cents) booked to an account.
// Positive amounts are debits, negative amounts credits.
type Entry struct {
	Txn     string
	Date    time.Time
	Account string
	Amount  int64
}

// Parse reads a journal with lines "date;txn;account;amount", where amount
// is a decimal like -1200.50. Blank lines and lines starting with # are skipped.
func Parse(r io.Reader) ([]Entry, error) {
	var entries []Entry
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseRow(strings.Split(line, ";"))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		entries = append(entries, e)
	}
	return entries, sc.Err()
}

func parseRow(fields []string) (Entry, error) {
	date, err := time.Parse("2006-01-02", fields[0])
	if err != nil {
		return Entry{}, err
	}
	account := strings.TrimSpace(fields[2])
	amount, err := parseCents(fields[3])
	if err != nil {
		return Entry{}, fmt.Errorf("account %s: %w", account, err)
	}
	return Entry{Txn: fields[1], Date: date, Account: account, Amount: amount}, nil
}

// parseCents converts "1200.5" or "-3.07" to cents.
func parseCents(s string) (int64, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 2 {
		return 0, fmt.Errorf("amount %q has more than two decimals", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad amount %q: %w", s, err)
	}
	return v, nil
}

package ledger

import "testing"

func TestCharge(t *testing.T) {
	var l Ledger
	l.Charge("acme", 1200)
	l.Charge("acme", 300)
	if got := l.Balance("acme"); got != 1500 {
		t.Fatalf("Balance = %d, want 1500", got)
	}
}

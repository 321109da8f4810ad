package dates

import "testing"

func TestParseBankDate(t *testing.T) {
	d, err := ParseBankDate("2026-03-01")
	if err != nil {
		t.Fatal(err)
	}
	if d.Day() != 1 || d.Month() != 3 {
		t.Fatalf("ParseBankDate = %v", d)
	}
}

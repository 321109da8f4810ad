package parse

import "testing"

func TestParseQuantity(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"12", 12},
		{" 7 ", 7},
		{"12 pcs", 12},
	} {
		if got := ParseQuantity(tt.in); got != tt.want {
			t.Errorf("ParseQuantity(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestSplitLine(t *testing.T) {
	customer, rest := SplitLine("acme;3;1200")
	if customer != "acme" || rest != "3;1200" {
		t.Fatalf("SplitLine = %q, %q", customer, rest)
	}
	customer, _ = SplitLine("no separator")
	if customer != "no separator" {
		t.Fatalf("SplitLine without separator = %q", customer)
	}
}

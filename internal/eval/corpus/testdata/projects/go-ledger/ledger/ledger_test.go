package ledger

import (
	"strings"
	"testing"
)

const journal = `# March
2024-03-01;t1;assets:bank:checking;-1200.00
2024-03-01;t1;expenses:rent;1200.00
2024-03-04;t2;assets:bank:checking;2500
2024-03-04;t2;income:salary;-2500
2024-03-09;t3;expenses:groceries;84.37
2024-03-09;t3;liabilities:card;-84.37
`

func TestParse(t *testing.T) {
	entries, err := Parse(strings.NewReader(journal))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 6 {
		t.Fatalf("parsed %d entries, want 6", len(entries))
	}
	if e := entries[4]; e.Account != "expenses:groceries" || e.Amount != 8437 {
		t.Errorf("entries[4] = %+v", e)
	}
}

func TestParseCents(t *testing.T) {
	for in, want := range map[string]int64{"1200": 120000, "-3.07": -307, "0.5": 50, "12.30": 1230} {
		got, err := parseCents(in)
		if err != nil || got != want {
			t.Errorf("parseCents(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestCheckBalanced(t *testing.T) {
	entries, _ := Parse(strings.NewReader(journal))
	if err := CheckBalanced(entries); err != nil {
		t.Fatal(err)
	}
}

func TestRollup(t *testing.T) {
	entries, _ := Parse(strings.NewReader(journal))
	b := NewBook()
	b.Post(entries...)
	chart := NewChart("assets:bank:checking", "expenses:rent", "income:salary", "liabilities:card")
	got := chart.Rollup(b)
	if got["expenses"] != 128437 {
		t.Errorf("expenses = %d, want 128437", got["expenses"])
	}
}

func TestMerge(t *testing.T) {
	a, b := NewBook(), NewBook()
	a.Post(Entry{Account: "assets:cash", Amount: 500})
	b.Post(Entry{Account: "assets:cash", Amount: 250}, Entry{Account: "expenses:food", Amount: -250})
	m := a.Merge(b)
	if got := m.Balance("assets:cash"); got != 750 {
		t.Errorf("merged assets:cash = %d, want 750", got)
	}
}

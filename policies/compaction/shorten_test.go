package compaction

import (
	"fmt"
	"strings"
	"testing"
)

func TestIdentifyingForm(t *testing.T) {
	tests := []struct {
		name, section, item, want string
	}{
		{"a constraint keeps its key phrase", secConstraints,
			"The max gRPC message size has to stay at 16 MiB, partners depend on it and nobody may change it without asking",
			"The max gRPC message size has to stay at 16 MiB …"},
		{"a decision keeps its object and the identifiers after it", secDecisions,
			"We decided to move the ledger writer onto errgroup.WithContext so that one failing shard cancels the others; see internal/ledger/writer.go:88 and E-3970-004",
			"We decided to move the ledger writer onto errgroup.WithContext so that one …" + " (internal/ledger/writer.go:88, E-3970-004)"},
		{"a long first clause is cut to its words", secUserNotes,
			"please remember that the staging cluster in eu-west-1 is shared with the payments team and their nightly jobs and load tests",
			"please remember that the staging cluster in eu-west-1 is shared with the …"},
		{"a short item stays", secConstraints, "never touch db/migrations", ""},
		{"a failure has its own shortening", secResolved, "bash: something failed in a way that has very many words in it, more than twelve of them", ""},
		{"shortened already", secDecisions, "We decided to move the ledger writer onto errgroup.WithContext so that one … (E-1)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := identifyingForm(tt.section, tt.item); got != tt.want {
				t.Errorf("identifyingForm =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestRenderShortensBeforeLeavingOut: as the budget shrinks, a summary keeps
// its heaviest items whole, gives the room left to the facts it could not
// keep whole, shortened to what identifies them, before the light items
// (user requests) get any; its lines count
// exactly what it shortened and what it left out.
func TestRenderShortensBeforeLeavingOut(t *testing.T) {
	items := map[string][]string{}
	for i := range 12 {
		items[secConstraints] = append(items[secConstraints], fmt.Sprintf("Constraint %d: the service called svc-%d must keep its public API stable for the partners who build on it every quarter", i, i))
		items[secDecisions] = append(items[secDecisions], fmt.Sprintf("Decision %d: we settled on queue-%d for the invoices because its retries are bounded and the operators already know how to run it", i, i))
		items[secRequests] = append(items[secRequests], fmt.Sprintf("run check %d again", i))
	}
	// Long notes: left out whole while room remains that their identifying
	// form fits in.
	for i := range 4 {
		items[secUserNotes] = append(items[secUserNotes], fmt.Sprintf("Note %d, in a person's many words: the staging cluster at 10.0.%d.7:6443 is shared with the payments team, ", i, i)+strings.Repeat("and their nightly jobs run long, ", 30))
	}
	render := func(budget int) string {
		b := newSummaryBuilder(SummaryRequest{})
		for title, list := range items {
			b.items[title] = append([]string(nil), list...)
		}
		return b.render((&SummaryRequest{Count: 40}).Label(), budget)
	}
	full := render(1 << 20)
	whole := strings.Count(full, "\n- ")
	if whole != 40 || strings.Contains(full, "…") {
		t.Fatalf("with room for all, want 40 whole items:\n%s", full)
	}
	b := newSummaryBuilder(SummaryRequest{})
	fullTokens := b.count(full)
	shortForms := map[string]bool{}
	for title, list := range items {
		for _, it := range list {
			if f := identifyingForm(title, it); f != "" {
				shortForms[f] = true
			}
		}
	}
	sawShortened, sawLeftOut := false, false
	for budget := fullTokens; budget > 100; budget -= fullTokens / 20 {
		text := render(budget)
		lines := strings.Count(text, "\n- ")
		short := strings.Count(text, " …")
		for _, l := range strings.Split(text, "\n") {
			if it, ok := strings.CutPrefix(l, "- "); ok && strings.Contains(it, " …") && !shortForms[it] {
				t.Errorf("budget %d: %q is not the identifying form of an item", budget, it)
			}
		}
		var leftOut, shortened int
		if _, err := fmt.Sscanf(afterString(text[:max(strings.Index(text, "left out to fit"), 0)], "\n[... "), "%d", &leftOut); err != nil && strings.Contains(text, "left out") {
			t.Fatalf("budget %d: unreadable note: %v\n%s", budget, err, text)
		}
		if i := strings.Index(text, " shortened to fit"); i >= 0 {
			start := strings.LastIndex(text[:i], "[... ")
			fmt.Sscanf(text[start+len("[... "):], "%d", &shortened)
			sawShortened = true
		}
		if !strings.Contains(text, "left out to fit") {
			leftOut = 0
		} else {
			sawLeftOut = true
		}
		if shortened != short {
			t.Errorf("budget %d: the note says %d shortened, %d are:\n%s", budget, shortened, short, text)
		}
		if lines+leftOut != 40 {
			t.Errorf("budget %d: %d items written and %d left out, want 40 in all:\n%s", budget, lines, leftOut, text)
		}
	}
	if !sawShortened || !sawLeftOut {
		t.Errorf("shrinking the budget never shortened (%v) or never left out (%v)", sawShortened, sawLeftOut)
	}
}

// afterString is what follows the last sep in s, or "".
func afterString(s, sep string) string {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return ""
	}
	return s[i+len(sep):]
}

package compaction

import (
	"strings"
	"testing"
)

// TestMemoKeysAreSeeded: one Memo keys a text the same way every time; two
// Memos key it differently (each has a random seed of its own), so no
// caller can work out from the code which other text shares a key.
func TestMemoKeysAreSeeded(t *testing.T) {
	a, b := NewMemo(nil), NewMemo(nil)
	for _, text := range []string{"", "short", strings.Repeat("a long tool output line\n", 100)} {
		if a.key('o', text) != a.key('o', text) {
			t.Errorf("a Memo keyed %q two ways", text)
		}
		if a.key('o', text) == b.key('o', text) {
			t.Errorf("two Memos keyed %q alike: the seed is not random", text)
		}
		if a.key('o', text) == a.key('u', text) {
			t.Errorf("two kinds of %q share a key", text)
		}
	}
	req := SummaryRequest{BudgetTokens: 100, Earlier: []string{"earlier"}}
	if a.requestKey(&req) != a.requestKey(&req) || a.requestKey(&req) == b.requestKey(&req) {
		t.Error("summary request keys are not seeded per Memo")
	}
	var none *Memo
	if none.key('o', "x") != 0 {
		t.Error("a nil Memo keys texts")
	}
}

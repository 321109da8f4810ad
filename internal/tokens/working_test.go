package tokens

import (
	"strings"
	"testing"
)

// LongestPiece bounds the longest piece the encoders make of a text: checked
// against the pre-tokenizers on texts long enough to be looked into.
func TestLongestPieceBoundsThePieces(t *testing.T) {
	pad := strings.Repeat("word ", LongPieceBytes/5+1)
	texts := map[string]string{
		"words":           pad,
		"one long run":    pad + strings.Repeat("x", 300_000) + pad,
		"run of accents":  pad + strings.Repeat("é", 100_000),
		"digits":          pad + strings.Repeat("7", 50_000),
		"punctuation run": pad + strings.Repeat("!?", 50_000),
		"mixed case run":  pad + strings.Repeat("aB", 70_000) + " tail",
		"spaces":          pad + strings.Repeat(" ", 80_000) + "x",
		"newlines":        pad + strings.Repeat("\n", 80_000),
	}
	encoders, err := buildEncoders()
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range texts {
		bound := LongestPiece(text)
		for _, enc := range encoders {
			longest := 0
			for start := 0; start < len(text); {
				end := enc.split(text, start)
				longest = max(longest, end-start)
				start = end
			}
			if longest > bound {
				t.Errorf("%s, %s: a piece of %d bytes, bound %d", name, enc.name, longest, bound)
			}
		}
	}
	if n := LongestPiece(strings.Repeat("x", LongPieceBytes-1)); n != 0 {
		t.Errorf("a text under LongPieceBytes gave %d, want 0 (not read)", n)
	}
}

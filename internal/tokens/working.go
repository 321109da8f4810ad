package tokens

// Counting a pre-tokenized piece holds about PieceWorkingBytes for each of
// its bytes while its merges run (bpe.go's heap: links, ranks, keys). Text
// splits into short pieces, but a run of letters without a space is one
// piece, however long: a caller that bounds memory holds this much before
// counting a text that may hold one.
const PieceWorkingBytes = 20

// LongPieceBytes is the shortest text LongestPiece looks into: a piece of
// fewer bytes costs too little to hold.
const LongPieceBytes = 256 << 10

// LongestPiece bounds the longest piece s may pre-tokenize to: pieces never
// mix ASCII whitespace with other bytes, so its longest run of either, plus
// the one byte of the other a piece may start with. A text shorter than
// LongPieceBytes gives 0, unread.
func LongestPiece(s string) int {
	if len(s) < LongPieceBytes {
		return 0
	}
	longest, run, space := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		isSpace := c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		if isSpace != space {
			run, space = 0, isSpace
		}
		run++
		longest = max(longest, run)
	}
	return min(longest+1, len(s))
}

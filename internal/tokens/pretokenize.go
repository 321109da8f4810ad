package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers below are hand-written equivalents of the encodings'
// regular expressions (encodingSpec.pattern), which tiktoken-go runs through
// regexp2 at a few MB/s. Each splitFunc returns where the piece starting at
// start ends, i.e. the end of the leftmost regexp2 match at start: every
// pattern matches at every position, so pieces tile the text. The tests check
// them against regexp2 itself, piece by piece.
//
// regexp2 matches runes: it converts the text with []rune(s), which turns
// every byte of invalid UTF-8 into its own U+FFFD. utf8.DecodeRuneInString
// does the same (utf8.RuneError, width 1), and U+FFFD is a symbol (So), so an
// invalid byte is an "other" character here exactly as there, and pieces keep
// the original bytes. Classes come from the same unicode tables regexp2 reads,
// so a Go upgrade moves both alike.

// splitFunc returns the end of the piece of s that starts at start < len(s).
type splitFunc func(s string, start int) (end int)

// runeClass holds the character-class memberships the patterns test.
type runeClass uint8

const (
	classLetter    runeClass = 1 << iota // \p{L}
	classNumber                          // \p{N}
	classSpace                           // \s: regexp2 uses unicode.IsSpace
	classNewline                         // \r or \n
	classUpperCase                       // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k)
	classLowerCase                       // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k)
)

// isOther reports [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls.
func isOther(c runeClass) bool { return c&(classLetter|classNumber|classSpace) == 0 }

// classNoPrefix excludes a rune from the optional prefix [^\r\n\p{L}\p{N}].
const classNoPrefix = classLetter | classNumber | classNewline

func classifyRune(r rune) runeClass {
	var c runeClass
	switch {
	case unicode.IsLetter(r):
		c = classLetter
		switch {
		case unicode.IsLower(r):
			c |= classLowerCase
		case unicode.IsUpper(r), unicode.IsTitle(r):
			c |= classUpperCase
		default: // Lm, Lo
			c |= classUpperCase | classLowerCase
		}
	case unicode.IsMark(r):
		c = classUpperCase | classLowerCase
	case unicode.IsNumber(r):
		c = classNumber
	case unicode.IsSpace(r):
		c = classSpace
		if r == '\r' || r == '\n' {
			c |= classNewline
		}
	}
	return c
}

var asciiClass = func() (t [utf8.RuneSelf]runeClass) {
	for b := range t {
		t[b] = classifyRune(rune(b))
	}
	return t
}()

// classAt classifies the rune at s[i:], invalid UTF-8 counting as one U+FFFD
// per byte (as regexp2 sees it).
func classAt(s string, i int) (runeClass, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	return classAtMultibyte(s, i)
}

// classAtMultibyte is classAt's slow path, apart so that classAt inlines.
func classAtMultibyte(s string, i int) (runeClass, int) {
	r, size := utf8.DecodeRuneInString(s[i:])
	return classifyRune(r), size
}

// skipAny returns the end of the run of runes from i that have any of want.
func skipAny(s string, i int, want runeClass) int {
	for i < len(s) {
		c, size := classAt(s, i)
		if c&want == 0 {
			break
		}
		i += size
	}
	return i
}

// skipOther returns the end of the run of [^\s\p{L}\p{N}] runes from i.
func skipOther(s string, i int) int {
	for i < len(s) {
		c, size := classAt(s, i)
		if !isOther(c) {
			break
		}
		i += size
	}
	return i
}

// skipBytes returns the end of the run of bytes from i that are in set.
func skipBytes(s string, i int, set string) int {
	for i < len(s) && containsByte(set, s[i]) {
		i++
	}
	return i
}

func containsByte(set string, b byte) bool {
	for j := 0; j < len(set); j++ {
		if set[j] == b {
			return true
		}
	}
	return false
}

// skipNumbers3 is \p{N}{1,3} from i, whose rune is a number.
func skipNumbers3(s string, i int) int {
	for k := 0; k < 3 && i < len(s); k++ {
		c, size := classAt(s, i)
		if c&classNumber == 0 {
			break
		}
		i += size
	}
	return i
}

// contractionLen is the length of 's|'t|'re|'ve|'m|'ll|'d at s[i:], or 0.
// With ignoreCase it matches as regexp2's (?i:...) does, comparing
// unicode.ToLower of the text; no non-ASCII rune lowers to one of these
// letters (TestContractionLettersFoldOnlyFromASCII), so folding ASCII bytes
// is exact.
func contractionLen(s string, i int, ignoreCase bool) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	lower := func(b byte) byte {
		if ignoreCase && 'A' <= b && b <= 'Z' {
			return b + ('a' - 'A')
		}
		return b
	}
	switch lower(s[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && lower(s[i+2]) == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && lower(s[i+2]) == 'l' {
			return 3
		}
	}
	return 0
}

// splitWhitespace ends the piece at the whitespace rune at start, for the
// patterns' tail `\s*[\r\n]+|\s+(?!\S)|\s+` (the first alternative only when
// newlineRun). Over the maximal whitespace run: \s*[\r\n]+ backtracks to end
// after its last \r or \n; \s+(?!\S) takes the whole run at the end of the
// text, and otherwise backtracks one rune so that the next piece starts with
// a space; a single space before a non-space falls through to \s+.
func splitWhitespace(s string, start int, newlineRun bool) int {
	end, last, afterNewline := start, start, -1
	for end < len(s) {
		c, size := classAt(s, end)
		if c&classSpace == 0 {
			break
		}
		last = end
		end += size
		if c&classNewline != 0 {
			afterNewline = end
		}
	}
	switch {
	case newlineRun && afterNewline >= 0:
		return afterNewline
	case end == len(s) || last == start:
		return end
	default:
		return last
	}
}

// splitCL100K implements
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitCL100K(s string, start int) int {
	if n := contractionLen(s, start, true); n > 0 {
		return start + n
	}
	c0, size0 := classAt(s, start)
	next := start + size0
	if c0&classLetter != 0 {
		return skipAny(s, next, classLetter)
	}
	if c0&classNoPrefix == 0 && next < len(s) {
		if c1, size1 := classAt(s, next); c1&classLetter != 0 {
			return skipAny(s, next+size1, classLetter)
		}
	}
	if c0&classNumber != 0 {
		return skipNumbers3(s, start)
	}
	if end, ok := splitPunctuation(s, start, c0); ok {
		return skipBytes(s, end, "\r\n")
	}
	return splitWhitespace(s, start, true)
}

// splitPunctuation matches ` ?[^\s\p{L}\p{N}]+` at start, whose rune has
// class c0.
func splitPunctuation(s string, start int, c0 runeClass) (int, bool) {
	if isOther(c0) {
		return skipOther(s, start), true
	}
	if s[start] == ' ' && start+1 < len(s) {
		if c1, _ := classAt(s, start+1); isOther(c1) {
			return skipOther(s, start+1), true
		}
	}
	return 0, false
}

// splitO200K implements
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitO200K(s string, start int) int {
	c0, size0 := classAt(s, start)
	if end := splitO200KWord(s, start, c0, size0); end >= 0 {
		return end
	}
	if c0&classNumber != 0 {
		return skipNumbers3(s, start)
	}
	if end, ok := splitPunctuation(s, start, c0); ok {
		return skipBytes(s, end, "\r\n/")
	}
	return splitWhitespace(s, start, true)
}

// splitO200KWord matches o200k's two word alternatives at start, or returns
// -1. Both begin with an optional prefix rune, tried taken first; a combining
// mark is both a prefix and a letter-case rune, so the untaken prefix can
// still match where the taken one failed.
func splitO200KWord(s string, start int, c0 runeClass, size0 int) int {
	var wordStarts [2]int
	starts := wordStarts[:0]
	if c0&classNoPrefix == 0 {
		starts = append(starts, start+size0)
	}
	starts = append(starts, start)
	for _, at := range starts {
		if end := upperThenLower(s, at); end >= 0 {
			return end + contractionLen(s, end, true)
		}
	}
	for _, at := range starts {
		if upperEnd := skipAny(s, at, classUpperCase); upperEnd > at {
			end := skipAny(s, upperEnd, classLowerCase)
			return end + contractionLen(s, end, true)
		}
	}
	return -1
}

// upperThenLower matches [upper]*[lower]+ at i, or returns -1. The greedy
// upper run gives back runes until a lower one follows: first none (the rune
// after the run), else back to its last rune that is both upper and lower.
func upperThenLower(s string, i int) int {
	lastBoth := -1
	for i < len(s) {
		c, size := classAt(s, i)
		if c&classUpperCase == 0 {
			if c&classLowerCase != 0 {
				return skipAny(s, i+size, classLowerCase)
			}
			break
		}
		if c&classLowerCase != 0 {
			lastBoth = i
		}
		i += size
	}
	if lastBoth < 0 {
		return -1
	}
	return skipAny(s, lastBoth, classLowerCase)
}

// splitP50K implements the GPT-2 pattern (p50k_base, r50k_base)
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitP50K(s string, start int) int {
	if n := contractionLen(s, start, false); n > 0 {
		return start + n
	}
	c, size := classAt(s, start)
	at := start
	if s[start] == ' ' && start+1 < len(s) {
		if c1, size1 := classAt(s, start+1); c1&classSpace == 0 {
			c, size, at = c1, size1, start+1
		}
	}
	switch {
	case c&classLetter != 0:
		return skipAny(s, at+size, classLetter)
	case c&classNumber != 0:
		return skipAny(s, at+size, classNumber)
	case isOther(c):
		return skipOther(s, at+size)
	}
	return splitWhitespace(s, start, false)
}

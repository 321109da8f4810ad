package tokens

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"
)

// The regexp2 patterns tiktoken-go splits with are the oracle for the
// hand-written splitters: every test here compares the two piece by piece.

var oraclePatterns = sync.OnceValue(func() map[string]*regexp2.Regexp {
	out := make(map[string]*regexp2.Regexp, len(encodingSpecs))
	for _, s := range encodingSpecs {
		out[s.name] = regexp2.MustCompile(s.pattern, regexp2.None)
	}
	return out
})

// regexpPieces splits s with the encoding's regexp2 pattern, as tiktoken-go
// does. regexp2 reports rune offsets over []rune(s), where each invalid byte
// is one U+FFFD; they map back to bytes by decoding the same way.
func regexpPieces(t testing.TB, encoding, s string) []string {
	t.Helper()
	re := oraclePatterns()[encoding]
	var pieces []string
	byteAt, runeAt := 0, 0
	advance := func(toRune int) {
		for runeAt < toRune {
			_, size := utf8.DecodeRuneInString(s[byteAt:])
			byteAt += size
			runeAt++
		}
	}
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		advance(m.Index)
		start := byteAt
		advance(m.Index + m.Length)
		piece := s[start:byteAt]
		if string([]rune(piece)) != m.String() {
			t.Fatalf("%s: rune offsets of match %q map to bytes %q", encoding, m.String(), piece)
		}
		pieces = append(pieces, piece)
	}
	if err != nil {
		t.Fatalf("%s: regexp2: %v", encoding, err)
	}
	return pieces
}

// splitterPieces splits s with the encoding's hand-written splitter.
func splitterPieces(encoding, s string) []string {
	var split splitFunc
	for _, spec := range encodingSpecs {
		if spec.name == encoding {
			split = spec.split
		}
	}
	var pieces []string
	for start := 0; start < len(s); {
		end := split(s, start)
		pieces = append(pieces, s[start:end])
		start = end
	}
	return pieces
}

func checkMatchesRegexp(t *testing.T, s string) {
	t.Helper()
	for _, spec := range encodingSpecs {
		want := regexpPieces(t, spec.name, s)
		if diff := cmp.Diff(want, splitterPieces(spec.name, s)); diff != "" {
			t.Errorf("%s %q: pieces (-regexp2 +splitter):\n%s", spec.name, s, diff)
		}
	}
}

var trickyTexts = []string{
	"", "a", " ", "\n", "'",
	// Contractions in every case, glued, split and look-alike.
	"don't I'm we're they've she'll he'd it's",
	"DON'T I'M WE'RE THEY'VE SHE'LL HE'D IT'S",
	"Don'T i'M We'Re tHeY'vE sHe'Ll He'D iT'S",
	"'s't're've'm'll'd'S'T'RE'VE'M'LL'D", "'re'Re'rE'RE'r'v'l'x", "'", "''s", "x'", "'ll", "'l", "'L",
	"ABC'S abc'S ǅx'll ʰ'd 中'Ve É'RE", "a 's 'sx 'S1", "O'Neil's", " 's", "\t's",
	"don\u2019t it\u2019S", "\u2018quoted\u2019 \u201cquoted\u201d",
	// Whitespace runs, CRLF, trailing spaces before newlines and at the end.
	"a\r\nb", "a\r\n\r\n\r\nb", "a  \r\n  b", "a \n", "a   \n\n  ", "x  ", "x \t ", "   hello", "\t\thello",
	"line\n\n\nnext", "\r", "\r\r\n\n", "  \n  x", "a\n b", "a \u00a0b", "\n\tb", " \n", "end \r\n",
	// Unicode spaces: NBSP, NEL, line/paragraph separators, ideographic space, BOM, zero-width.
	"a\u00a0b\u00a0\u00a0c", "a\u0085b\u0085\u0085", "a\u2028b\u2029c", "a\u3000\u3000b", "a\ufeffb", "a\u200bb",
	"a\u2000\u2001\u200a b", "\u1680x", "a\v\fb", "a\x1cb\x1fc", "x\u0085\ny",
	// Letters of every case class, mixed scripts, combining marks.
	"HelloWorld HTTPServer XMLHttpRequest iPhone macOS", "ǅemal ǈ ǋx", "ʰʱʲ aʰb Aʰ", "中文字符 日本語テキスト 한국어",
	"Ελληνικά КИРИЛЛИЦА кириллица", "مرحبا بالعالم", "हिन्दी किताब", "e\u0301te\u0301 E\u0301TE\u0301",
	"\u0301", "\u0301abc", "\u0301ABC def", "x\u0301\u0301\u0301", " \u0301A", "A\u0301B\u0301c", "ABC\u0301",
	"\u0301\u0301ABC", "ß ẞ ﬁ", "ÀÉÎõü", "Ab\u0301C",
	// Digit runs of 1..7, other numbers.
	"1", "12", "123", "1234", "12345", "123456", "1234567", "a1234567b", " 1234567", "3.14159 -42 1e10",
	"٣٤٥٦ ½¼ ⅫⅩ ¹²³ ①②③④", "v1.2.3", "0x1F",
	// Punctuation runs with trailing newlines and slashes.
	"a.\n\nb", "a/b//c", "://\n/", "!!!\r\n", " ?!\n", "x /* c */\n", "{\"a\": [1, 2]}\n",
	"path/to/file.go:12:3", "<|endoftext|>", "a -- b", "( hello )",
	// Emoji and ZWJ sequences, symbols, variation selectors.
	"👨\u200d👩\u200d👧\u200d👦 family", "👍🏽 ok", "❤\ufe0f", "🇫🇷🇩🇪", "a😀b", " 😀", "©®™ €$¥",
	// Controls, NUL, U+FFFD, and invalid UTF-8 (one U+FFFD per byte for regexp2).
	"a\x00b", "\x7f", "\ufffd", "a\xffb", "\xff\xfe", "\xc3", "\xc3(", "\xe4\xb8", "\xed\xa0\x80",
	"\xf4\x90\x80\x80", "caf\xe9", " \xff", "\xffabc", "a\xff'S", "\xff\xff\n\n",
}

func TestPreTokenizerMatchesRegexpTable(t *testing.T) {
	for _, s := range trickyTexts {
		checkMatchesRegexp(t, s)
	}
}

// TestPreTokenizerPieces pins a few splits that follow from backtracking.
func TestPreTokenizerPieces(t *testing.T) {
	tests := []struct {
		encoding, text string
		want           []string
	}{
		{EncodingCL100K, "a   \nb  c  ", []string{"a", "   \n", "b", " ", " c", "  "}},
		{EncodingCL100K, "I'M 'sx", []string{"I", "'M", " '", "sx"}},
		{EncodingO200K, "I'M 'sx", []string{"I'M", " '", "sx"}},
		{EncodingO200K, "HTTPServer", []string{"HTTPServer"}},
		{EncodingO200K, "\u0301ABC def", []string{"\u0301", "ABC", " def"}},
		{EncodingO200K, "1234567", []string{"123", "456", "7"}},
		{EncodingP50K, "I'M 's", []string{"I", "'", "M", " '", "s"}},
	}
	for _, tt := range tests {
		got := splitterPieces(tt.encoding, tt.text)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tt.encoding, tt.text, diff)
		}
		if diff := cmp.Diff(regexpPieces(t, tt.encoding, tt.text), got); diff != "" {
			t.Errorf("%s %q (-regexp2 +splitter):\n%s", tt.encoding, tt.text, diff)
		}
	}
}

// randomAlphabet mixes every class the patterns distinguish with the
// sequences their alternatives look for.
var randomAlphabet = []string{
	"a", "z", "A", "Z", "s", "S", "t", "T", "r", "R", "e", "E", "v", "V", "m", "M", "l", "L", "d", "D",
	"'", "'s", "'RE", "'ll", "\u2019", "0", "7", "1234", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f",
	".", ",", "/", "-", "_", "(", ")", "{", "\"", "!", "?", "#", "\u00a0", "\u0085", "\u2028", "\u2029", "\u3000",
	"\u200b", "\u200d", "\ufeff", "é", "É", "\u0301", "\u0300", "\u0903", "\u20dd", "ǅ", "ǈ", "ʰ", "ー", "中", "ß",
	"ب", "क", "ि", "Ж", "ж", "Ω", "٣", "½", "Ⅻ", "²", "😀", "👍🏽", "\ufe0f", "©", "€", "\ufffd", "\x00", "\x7f",
	"\xff", "\xc3", "\xe4\xb8", "\xed\xa0\x80", "\x80",
}

// TestPreTokenizerMatchesRegexpRandom compares the splitters with regexp2 on
// random strings over randomAlphabet.
func TestPreTokenizerMatchesRegexpRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 15000 {
		var b strings.Builder
		for n := rng.IntN(40); n > 0; n-- {
			b.WriteString(randomAlphabet[rng.IntN(len(randomAlphabet))])
		}
		checkMatchesRegexp(t, b.String())
		if t.Failed() {
			return
		}
	}
}

// allRunes is every code point regexp2 can see, surrogates excluded (Go
// strings cannot hold them: they decode as U+FFFD).
var allRunes = sync.OnceValue(func() string {
	var b strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
})

// regexpMembers returns the runes of allRunes that pattern (a character
// class, repeated) matches, as regexp2 decides it.
func regexpMembers(t *testing.T, pattern string) map[rune]bool {
	t.Helper()
	runes := []rune(allRunes())
	re := regexp2.MustCompile(pattern, regexp2.None)
	members := make(map[rune]bool)
	m, err := re.FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		for _, r := range runes[m.Index : m.Index+m.Length] {
			members[r] = true
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return members
}

// TestRuneClassesMatchRegexp checks classifyRune against regexp2's own
// character classes over every code point.
func TestRuneClassesMatchRegexp(t *testing.T) {
	classes := []struct {
		pattern string
		class   runeClass
	}{
		{`\p{L}+`, classLetter},
		{`\p{N}+`, classNumber},
		{`\s+`, classSpace},
		{`[\r\n]+`, classNewline},
		{`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+`, classUpperCase},
		{`[\p{Ll}\p{Lm}\p{Lo}\p{M}]+`, classLowerCase},
	}
	for _, c := range classes {
		members := regexpMembers(t, c.pattern)
		for _, r := range allRunes() {
			if got := classifyRune(r)&c.class != 0; got != members[r] {
				t.Errorf("%U in %s: splitter says %v, regexp2 %v", r, c.pattern, got, members[r])
			}
		}
	}
}

// TestContractionLettersFoldOnlyFromASCII backs contractionLen's bytewise
// case folding: under (?i) regexp2 lowers the text with unicode.ToLower, and
// only ASCII letters lower to the contractions' characters.
func TestContractionLettersFoldOnlyFromASCII(t *testing.T) {
	for _, c := range "'strevmld" {
		members := regexpMembers(t, `(?i:`+string(c)+`)+`)
		want := map[rune]bool{c: true, unicode.ToUpper(c): true}
		if diff := cmp.Diff(want, members); diff != "" {
			t.Errorf("(?i:%c) matches (-want +got):\n%s", c, diff)
		}
	}
}

// FuzzPreTokenizerMatchesRegexp compares every splitter with its regexp2
// pattern on arbitrary bytes, valid UTF-8 or not.
func FuzzPreTokenizerMatchesRegexp(f *testing.F) {
	for _, s := range trickyTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2048 {
			s = s[:2048]
		}
		checkMatchesRegexp(t, s)
	})
}

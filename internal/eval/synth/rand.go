package synth

import (
	"math"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// rnd is the generator's one source of randomness; everything it makes is a
// function of the seed.
type rnd struct{ *rand.Rand }

func newRnd(seed uint64, stream uint64) rnd {
	return rnd{rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))}
}

func pick[T any](r rnd, xs []T) T { return xs[r.IntN(len(xs))] }

// chance is true with probability p.
func (r rnd) chance(p float64) bool { return r.Float64() < p }

// between is a uniform integer in [lo, hi].
func (r rnd) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

// logUniform is an integer in [lo, hi] whose logarithm is uniform: small
// values are common, large ones rare, as tool output sizes are.
func (r rnd) logUniform(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	l, h := math.Log(float64(lo)), math.Log(float64(hi))
	return int(math.Exp(l + r.Float64()*(h-l)))
}

// logSkewed is like logUniform with its exponent drawn as u² instead of u:
// most values sit near lo, with a long tail up to hi (for [200, 2000]: mean
// about 560, median about 350).
func (r rnd) logSkewed(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	u := r.Float64()
	l, h := math.Log(float64(lo)), math.Log(float64(hi))
	return int(math.Exp(l + u*u*(h-l)))
}

// weighted picks an index with the given weights.
func (r rnd) weighted(weights ...float64) int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	x := r.Float64() * total
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func (r rnd) token(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func (r rnd) hex(n int) string { return r.token(n, "0123456789abcdef") }

// some returns k distinct elements of xs in random order.
func some[T any](r rnd, xs []T, k int) []T {
	idx := r.Perm(len(xs))
	if k > len(xs) {
		k = len(xs)
	}
	out := make([]T, k)
	for i := 0; i < k; i++ {
		out[i] = xs[idx[i]]
	}
	return out
}

func upperFirst(s string) string {
	c, n := utf8.DecodeRuneInString(s)
	if c == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(c)) + s[n:]
}

func lowerFirst(s string) string {
	c, n := utf8.DecodeRuneInString(s)
	if c == utf8.RuneError {
		return s
	}
	// Keep acronyms and identifiers ("API", "CI", "TestFoo") as they are.
	if n < len(s) {
		next, _ := utf8.DecodeRuneInString(s[n:])
		if unicode.IsUpper(next) || unicode.IsDigit(next) {
			return s
		}
	}
	return string(unicode.ToLower(c)) + s[n:]
}

// fill replaces {name} slots in a template.
func fill(tmpl string, slots map[string]string) string {
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		name := tmpl[i+1 : i+j]
		v, ok := slots[name]
		if !ok {
			panic("synth: template slot {" + name + "} has no value in: " + tmpl)
		}
		b.WriteString(tmpl[:i])
		b.WriteString(v)
		tmpl = tmpl[i+j+1:]
	}
}

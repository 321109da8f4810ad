package plan

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// BM25 parameters (Robertson's usual values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// terms lowercases s and splits it into words of letters and digits.
func terms(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

// BM25Scores scores each document against the query with Okapi BM25.
func BM25Scores(docs []string, query string) []float64 {
	tokenized := make([][]string, len(docs))
	df := map[string]int{}
	total := 0
	for i, d := range docs {
		tokenized[i] = terms(d)
		total += len(tokenized[i])
		seen := map[string]bool{}
		for _, t := range tokenized[i] {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	scores := make([]float64, len(docs))
	if len(docs) == 0 || total == 0 {
		return scores
	}
	avgdl := float64(total) / float64(len(docs))
	n := float64(len(docs))
	qterms := map[string]bool{}
	for _, q := range terms(query) {
		qterms[q] = true
	}
	for i, doc := range tokenized {
		tf := map[string]int{}
		for _, t := range doc {
			if qterms[t] {
				tf[t]++
			}
		}
		for q := range qterms {
			f := float64(tf[q])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
			scores[i] += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(doc))/avgdl))
		}
	}
	return scores
}

// chunkText splits s into pieces of at most size bytes, at line ends where
// it can, on rune boundaries always.
func chunkText(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		if len(s) <= size {
			out = append(out, s)
			break
		}
		cut := size
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl >= size/2 {
			cut = nl + 1
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// Extract keeps the chunks of content most relevant to query (BM25, ties to
// the earlier chunk) within budgetTokens, in their original order, marking
// the gaps. Chunks matching no query term are kept only when none matches
// (then the head is kept). It returns "" when not even one chunk fits.
func Extract(content, query string, chunkChars, budgetTokens int, counter agentstate.TokenCounter) string {
	chunks := chunkText(content, chunkChars)
	scores := BM25Scores(chunks, query)
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	header := fmt.Sprintf("[ctxc extract: the parts of a %d-character result most relevant to %q]\n", len(content), shorten(query, 120))
	used := counter.CountText(header)
	keep := make([]bool, len(chunks))
	kept := 0
	relevant := len(order) > 0 && scores[order[0]] > 0
	for _, i := range order {
		if relevant && scores[i] == 0 {
			break // the rest matches no query term: leave it out
		}
		n := counter.CountText(chunks[i]) + 8 // room for a gap marker
		if used+n > budgetTokens {
			continue
		}
		keep[i] = true
		used += n
		kept++
	}
	if kept == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(header)
	gap := 0
	for i, c := range chunks {
		if !keep[i] {
			gap += len(c)
			continue
		}
		if gap > 0 {
			fmt.Fprintf(&b, "\n[... %d characters omitted ...]\n", gap)
			gap = 0
		}
		b.WriteString(c)
	}
	if gap > 0 {
		fmt.Fprintf(&b, "\n[... %d characters omitted ...]\n", gap)
	}
	return b.String()
}

// shorten cuts s to n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

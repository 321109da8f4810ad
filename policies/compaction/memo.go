package compaction

import (
	"hash/maphash"
	"slices"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/zeebo/xxh3"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/facts"
)

// memoEntries bounds each of a Memo's caches.
const memoEntries = 50_000

// Memo remembers what the deterministic summarizer read from a text: the
// classified sentences of a message and the lines of a tool output worth
// keeping. Reading is the summarizer's cost (regular expressions over every
// line of every output), and a long session is summarized again at every
// compaction point of every compile, from the same messages; so a summarize
// policy keeps one Memo for all the requests it serves. Safe for concurrent
// use; a nil Memo remembers nothing.
//
// One Memo serves every caller: what it holds follows from the texts alone.
// Its keys are hashed with a seed of its own, random, so that no caller can
// craft a text whose key is that of another caller's text and have what
// was read of it (a summary's lines) taken for the other's.
type Memo struct {
	seed      uint64
	digests   *diagnose.Cache
	sentences *lru.Cache[uint64, []sentence]
	outputs   *lru.Cache[uint64, outputLines]
	weights   *lru.Cache[uint64, int]
	summaries *lru.Cache[uint64, fitted]
}

// fitted is a written summary and the heaviest weight it left out.
type fitted struct {
	text string
	lost int
}

// NewMemo returns an empty Memo reading tool outputs through digests (nil:
// a cache of its own).
func NewMemo(digests *diagnose.Cache) *Memo {
	if digests == nil {
		digests = diagnose.NewCache()
	}
	s, _ := lru.New[uint64, []sentence](memoEntries)
	o, _ := lru.New[uint64, outputLines](memoEntries)
	w, _ := lru.New[uint64, int](memoEntries)
	f, _ := lru.New[uint64, fitted](memoEntries / 10)
	return &Memo{seed: maphash.String(maphash.MakeSeed(), "compaction.Memo"), digests: digests, sentences: s, outputs: o, weights: w, summaries: f}
}

// sentence is one classified sentence of a message's text, with the
// paragraph it stands in.
type sentence struct {
	text      string
	class     facts.Class
	specific  bool
	paragraph int
}

// outputLines are what a tool output holds that a summary keeps: whether it
// says itself that it failed, the lines that identify its failure (when it
// failed) in full and in their shortest form, or its first line reporting
// trouble.
type outputLines struct {
	failed bool
	// diagnostics: the errors are findings (diagnostics, exceptions, failed
	// tests), not the lines an output without any holds last.
	diagnostics bool
	errors      []string
	headlines   []string
	observed    string
	// problems are the error lines of an output that went through
	// (diagnose.Digest.ProblemLines): not its warnings.
	problems []string
}

// key is the Memo's key of a text of a kind; 0 for a nil Memo, which
// remembers nothing.
func (m *Memo) key(kind byte, s string) uint64 {
	if m == nil {
		return 0
	}
	return xxh3.HashStringSeed(s, m.seed^(uint64(kind)<<56|uint64(len(s))))
}

// classified splits a text into sentences and classifies each.
func (m *Memo) classified(text string, user bool) []sentence {
	kind := byte('a')
	if user {
		kind = 'u'
	}
	key := m.key(kind, text)
	if m != nil {
		if v, ok := m.sentences.Get(key); ok {
			return v
		}
	}
	var out []sentence
	for k, p := range facts.Paragraphs(text) {
		ss := facts.Sentences(p)
		for i, c := range facts.ClassifyAll(ss, user) {
			out = append(out, sentence{ss[i], c, facts.Specific(ss[i]), k})
		}
	}
	if m != nil {
		m.sentences.Add(key, out)
	}
	return out
}

// output reads a tool output once.
func (m *Memo) output(content string) outputLines {
	key := m.key('o', content)
	if m != nil {
		if v, ok := m.outputs.Get(key); ok {
			return v
		}
	}
	var d diagnose.Digest
	if m != nil {
		d = *m.digests.Read(content)
	} else {
		d = diagnose.Read(content)
	}
	out := outputLines{failed: d.Failed, observed: d.Trouble(), diagnostics: len(d.Findings) > 0, problems: d.ProblemLines(false, diagnose.DefaultLimits)}
	d.Failed = true
	out.errors = d.Lines(diagnose.DefaultLimits)
	out.headlines = d.Headlines(diagnose.DefaultLimits)
	if m != nil {
		m.outputs.Add(key, out)
	}
	return out
}

// pastedErrors returns the lines that report errors in what a user pasted
// (fenced or indented blocks), each line of a finding on its own (a long
// finding joined on one line would be cut as one item). A block the user
// introduced as the output of a command line ("I get this when I run `make
// test`:"), or that says itself that it failed, is their report of trouble,
// read as a failed output: the lines that identify its failure. Of another
// block, the diagnostics that read as error lines, and no line of code (a
// source file pasted uses error words: "class OutOfStock(Exception):").
func (m *Memo) pastedErrors(text string) []string {
	if !strings.Contains(text, "```") && !strings.Contains(text, "\n    ") && !strings.Contains(text, "\n\t") {
		return nil
	}
	var out []string
	for _, p := range facts.Pastes(text) {
		pasted := m.output(p.Block)
		reported := pasted.failed || facts.IntroducesRun(p.Lead)
		// Without diagnostics the lines are what an output holds last: of a
		// block of code, none report an error.
		if !reported && !pasted.diagnostics && slices.ContainsFunc(strings.Split(p.Block, "\n"), diagnose.CodeLike) {
			continue
		}
		for _, finding := range pasted.errors {
			if reported || facts.ErrorLine(finding) {
				out = append(out, strings.Split(finding, diagnose.LineSep)...)
			}
		}
	}
	return out
}

// weight is facts.Weight of an item of a section's class.
func (m *Memo) weight(text string, c facts.Class) int {
	key := m.key('w'+byte(c), text)
	if m != nil {
		if v, ok := m.weights.Get(key); ok {
			return v
		}
	}
	w := facts.Weight(text, c)
	if m != nil {
		m.weights.Add(key, w)
	}
	return w
}

// requestKey identifies a summary request by everything the deterministic
// summary reads: the budget, the counter, the earlier and merged texts, and
// each span message's id, role, kind, mask and parts.
func (m *Memo) requestKey(req *SummaryRequest) uint64 {
	h := xxh3.NewSeed(m.seed)
	var num [8]byte
	put := func(n int) {
		for i := range num {
			num[i] = byte(uint64(n) >> (8 * i))
		}
		_, _ = h.Write(num[:])
	}
	str := func(s string) {
		put(len(s))
		_, _ = h.WriteString(s)
	}
	put(req.BudgetTokens)
	put(req.Count)
	str(req.First)
	str(req.Last)
	if req.Counter != nil {
		str(req.Counter.Name())
	}
	for _, group := range [][]string{req.Merge, req.Earlier} {
		put(len(group))
		for _, t := range group {
			str(t)
		}
	}
	put(len(req.Running))
	for _, id := range req.Running {
		str(id)
	}
	put(len(req.Span))
	for i := range req.Span {
		m := &req.Span[i]
		str(m.ID)
		put(int(m.Role)<<8 | int(m.Kind))
		if m.Mask != nil {
			put(1) // a masked assistant message's text is not read
		}
		put(len(m.Parts))
		for _, p := range m.Parts {
			put(int(p.Kind))
			str(p.Text)
			str(p.ToolCall.ID)
			str(p.ToolCall.Name)
			str(p.ToolCall.ArgumentsJSON)
			str(p.ToolResult.ToolCallID)
			str(p.ToolResult.Name)
			str(p.ToolResult.Content)
			if p.ToolResult.IsError {
				put(1)
			}
		}
	}
	return h.Sum64()
}

// summary returns the remembered summary of a request, if any.
func (m *Memo) summary(key uint64) (fitted, bool) {
	if m == nil {
		return fitted{}, false
	}
	return m.summaries.Get(key)
}

func (m *Memo) remember(key uint64, f fitted) {
	if m != nil {
		m.summaries.Add(key, f)
	}
}

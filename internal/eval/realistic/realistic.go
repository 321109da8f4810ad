// Package realistic generates long coding-agent sessions out of what was
// recorded, not written: every tool output is a real command's output from
// eval/corpus (compilers, test runners, interpreters, clients, databases,
// shells run on projects with real bugs), and every constraint, decision,
// note, request and remark is a person's wording from the conversation
// corpus. The facts a compiled context must keep are the labels read off
// those outputs (the lines that identify each failure) and the parts of the
// phrases that carry a rule, a conclusion or a fact, each planted at the
// turn it first appears. Nothing in a session is phrased to match ctxc's
// extractors.
package realistic

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/eval"
	"github.com/contextcompiler/ctxc/internal/eval/corpus"
)

// Options shape a generated session. Zero fields take DefaultOptions.
type Options struct {
	Seed  uint64
	Turns int // default 40
	// Model is the session's model; default "gpt-4o".
	Model string
	// TotalTokens is the range the whole session's size (as Count counts)
	// must land in; another attempt from the next sub-seed is made while it
	// does not. Default 100,000–160,000 tokens for 40 turns, scaled.
	TotalTokens [2]int
	// Count counts a text's tokens; default len/4. ctxc eval passes the
	// CountTokens RPC of the session's model.
	Count func(string) int
}

// DefaultOptions are the defaults for a seed.
func DefaultOptions(seed uint64) Options {
	return Options{Seed: seed, Turns: 40, Model: "gpt-4o", TotalTokens: [2]int{100_000, 160_000}, Count: func(s string) int { return (len(s) + 3) / 4 }}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions(o.Seed)
	if o.Turns == 0 {
		o.Turns = d.Turns
	}
	if o.Model == "" {
		o.Model = d.Model
	}
	if o.TotalTokens == [2]int{} {
		o.TotalTokens = [2]int{d.TotalTokens[0] * o.Turns / 40, d.TotalTokens[1] * o.Turns / 40}
	}
	if o.Count == nil {
		o.Count = d.Count
	}
	return o
}

// maxAttempts bounds the sub-seeds tried to land in TotalTokens.
const maxAttempts = 30

// Generate makes a session; the same Options give the same session.
func Generate(opts Options) (*eval.Session, error) {
	opts = opts.withDefaults()
	if opts.Turns < 1 || opts.Turns > 10_000 {
		return nil, fmt.Errorf("turns: %d must be between 1 and 10000", opts.Turns)
	}
	// A malformed case is left out (the corpus's own test names it).
	cases, err := corpus.All()
	if len(cases) == 0 {
		return nil, fmt.Errorf("recorded outputs: none usable: %w", err)
	}
	conv, err := corpus.LoadConversation()
	if err != nil {
		return nil, fmt.Errorf("conversation corpus: %w", err)
	}
	var best *eval.Session
	bestDist := -1
	for attempt := uint64(0); attempt < maxAttempts; attempt++ {
		g := newGen(opts, attempt, cases, conv)
		s, err := g.session()
		if err != nil {
			return nil, err
		}
		dist := 0
		switch total := g.total; {
		case total < opts.TotalTokens[0]:
			dist = opts.TotalTokens[0] - total
		case total > opts.TotalTokens[1]:
			dist = total - opts.TotalTokens[1]
		}
		if best == nil || dist < bestDist {
			best, bestDist = s, dist
		}
		if dist == 0 {
			break
		}
	}
	return best, nil
}

// stack is a kind of project: its language, the families of recorded
// outputs its agent runs into, and the wording that fits it.
type stack struct {
	lang     string
	families []string
	// main is the share of calls that go to the first family.
	main float64
}

var stacks = []stack{
	{"go", []string{"go", "shell", "git", "sql", "http", "grpc", "docker", "kubernetes", "terraform"}, 0.55},
	{"python", []string{"python", "shell", "git", "sql", "http", "docker"}, 0.6},
	{"typescript", []string{"typescript", "javascript", "shell", "git", "http", "docker"}, 0.6},
	{"java", []string{"java", "shell", "git", "sql", "http", "docker"}, 0.6},
	{"rust", []string{"rust", "c", "shell", "git", "http"}, 0.6},
}

type gen struct {
	opts  Options
	r     *rand.Rand
	stack stack
	// byFamily holds the usable cases of each family, failed and not.
	failed, passed map[string][]corpus.Case
	usedFail       map[string]bool
	conv           *corpus.Conversation
	phrases        map[string][]corpus.Phrase // by kind, fitting the stack
	usedPhrase     map[string]bool

	header  eval.Header
	lines   []eval.Line
	planted map[string]bool
	logText strings.Builder
	turn    int
	total   int
	callSeq int
}

func newGen(opts Options, attempt uint64, cases []corpus.Case, conv *corpus.Conversation) *gen {
	r := rand.New(rand.NewPCG(opts.Seed, attempt*0x9e3779b97f4a7c15+1))
	g := &gen{opts: opts, r: r, stack: stacks[opts.Seed%uint64(len(stacks))], failed: map[string][]corpus.Case{}, passed: map[string][]corpus.Case{},
		usedFail: map[string]bool{}, conv: conv, phrases: map[string][]corpus.Phrase{}, usedPhrase: map[string]bool{}, planted: map[string]bool{}}
	for _, c := range cases {
		if !slices.Contains(g.stack.families, c.Meta.Family) || strings.Contains(c.Output, "\x1b") || strings.TrimSpace(c.Output) == "" {
			continue // colour codes: an agent's shell is no terminal
		}
		if c.Meta.Failed {
			g.failed[c.Meta.Family] = append(g.failed[c.Meta.Family], c)
		} else {
			g.passed[c.Meta.Family] = append(g.passed[c.Meta.Family], c)
		}
	}
	fits := func(ps []corpus.Phrase) []corpus.Phrase {
		var out []corpus.Phrase
		for _, p := range ps {
			if p.Lang == "any" || p.Lang == g.stack.lang || g.stack.lang == "typescript" && p.Lang == "javascript" {
				out = append(out, p)
			}
		}
		return out
	}
	g.phrases["constraint"] = fits(conv.Constraints)
	g.phrases["decision"] = fits(conv.Decisions)
	g.phrases["note"] = fits(conv.Notes)
	g.phrases["chatter"] = fits(conv.Chatter)
	g.phrases["request"] = fits(conv.Requests)
	return g
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

// phrase picks an unused phrase of a kind (any phrase when all were used).
func (g *gen) phrase(kind string) corpus.Phrase {
	ps := g.phrases[kind]
	for i := 0; i < 12; i++ {
		p := ps[g.r.IntN(len(ps))]
		if !g.usedPhrase[p.Text] {
			g.usedPhrase[p.Text] = true
			return p
		}
	}
	return ps[g.r.IntN(len(ps))]
}

func (g *gen) session() (*eval.Session, error) {
	g.header = eval.Header{
		ID:          fmt.Sprintf("recorded-%d", g.opts.Seed),
		Description: fmt.Sprintf("Generated by eval/realistic (seed %d, %d turns): a %s project; real tool outputs from eval/corpus, people's wording from its conversation corpus.", g.opts.Seed, g.opts.Turns, g.stack.lang),
		Model:       &ctxcv1.ModelSpec{Name: g.opts.Model},
		Tools:       []*ctxcv1.ToolDefinition{bashTool},
	}
	g.header.SystemPrompt = "You are a coding agent with a shell in the project's repository. Run commands to inspect, build and test; read errors carefully; keep the user's constraints; explain what you changed."
	g.total = g.count(g.header.SystemPrompt) + g.count(bashTool.GetDescription()+bashTool.GetParametersJson())
	for g.turn = 1; g.turn <= g.opts.Turns; g.turn++ {
		g.userTurn()
		g.execution()
	}
	s := &eval.Session{Header: g.header, Lines: g.lines, Name: g.header.ID}
	if len(s.Header.Facts) == 0 {
		return nil, errors.New("a session without facts")
	}
	return s, nil
}

var bashTool = &ctxcv1.ToolDefinition{Name: "bash", Description: "Run a shell command in the repository and return its combined output.",
	ParametersJson: `{"type":"object","properties":{"command":{"type":"string","description":"the command line"}},"required":["command"]}`}

func (g *gen) count(s string) int { return g.opts.Count(s) }

// userTurn writes a user message: a request, and often a constraint, a note
// or a remark with it, or a failure the user pasted.
func (g *gen) userTurn() {
	var parts []string
	var facts []struct {
		kind eval.FactKind
		text string
	}
	add := func(kind string, fk eval.FactKind) {
		p := g.phrase(kind)
		parts = append(parts, p.Text)
		if p.Fact != "" {
			facts = append(facts, struct {
				kind eval.FactKind
				text string
			}{fk, p.Fact})
		}
	}
	if g.turn > 1 && g.chance(0.2) {
		add("chatter", "")
	}
	add("request", "")
	switch {
	case g.turn == 1 || g.chance(0.3):
		add("constraint", eval.FactConstraint)
	case g.chance(0.2):
		add("note", eval.FactOther)
	}
	if g.turn > 1 && g.chance(0.06) {
		if c, ok := g.failure(); ok {
			parts = append(parts, "I get this when I run `"+c.Meta.Command+"`:\n\n```\n"+strings.TrimRight(c.Output, "\n")+"\n```")
			for _, l := range identifying(c) {
				facts = append(facts, struct {
					kind eval.FactKind
					text string
				}{eval.FactErrorCode, l})
			}
		}
	}
	if g.r.IntN(2) == 0 && len(parts) > 1 {
		g.r.Shuffle(len(parts)-1, func(i, j int) { parts[i+1], parts[j+1] = parts[j+1], parts[i+1] })
	}
	text := strings.Join(parts, g.pick([]string{"\n\n", " ", "\n"}))
	msg := textMessage(ctxcv1.Role_ROLE_USER, text)
	g.emit(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{msg}}}})
	if g.turn == 1 {
		g.planted[text] = true
		g.header.Facts = append(g.header.Facts, eval.Fact{ID: fmt.Sprintf("f%d", len(g.header.Facts)+1), Kind: eval.FactFirstTask, Text: text, Turn: 1})
	}
	for _, f := range facts {
		g.plantAfter(f.kind, f.text)
	}
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// plantAfter plants a fact written by the input just emitted (plant checks
// the log before it).
func (g *gen) plantAfter(kind eval.FactKind, text string) {
	text = strings.TrimSpace(text)
	if text == "" || g.planted[text] {
		return
	}
	g.planted[text] = true
	g.header.Facts = append(g.header.Facts, eval.Fact{ID: fmt.Sprintf("f%d", len(g.header.Facts)+1), Kind: kind, Text: text, Turn: g.turn})
}

// execution writes the agent's steps for a turn: tool calls with recorded
// outputs, a decision stated after a failure, and a final answer.
func (g *gen) execution() {
	steps := g.between(2, 5)
	decide := false
	for s := 0; s < steps; s++ {
		var parts []*ctxcv1.Part
		var stated []string
		switch {
		case decide && g.chance(0.7):
			p := g.phrase("decision")
			parts = append(parts, textPart(p.Text))
			stated = append(stated, p.Fact)
			decide = false
		case g.chance(0.25):
			parts = append(parts, textPart(g.phrase("chatter").Text))
		}
		calls := 1
		if g.chance(0.35) {
			calls = g.between(2, 3)
		}
		var results []*ctxcv1.Message
		var failed [][]string
		for k := 0; k < calls; k++ {
			c := g.call()
			g.callSeq++
			id := fmt.Sprintf("call_%d", g.callSeq)
			args, _ := json.Marshal(map[string]string{"command": c.Meta.Command})
			parts = append(parts, &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: "bash", ArgumentsJson: string(args)}}})
			results = append(results, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{
				ToolCallId: id, Name: "bash", Content: c.Output, IsError: c.Meta.ExitCode != 0}}}}})
			if c.Meta.Failed {
				failed = append(failed, identifying(c))
				decide = true
			}
		}
		msgs := append([]*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: parts}}, results...)
		g.emit(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{Messages: msgs, FinishReason: ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS,
			Usage: &ctxcv1.Usage{InputTokenCount: uint32(g.total), OutputTokenCount: 60}}}})
		for _, f := range stated {
			g.plantAfter(eval.FactDecision, f)
		}
		for _, lines := range failed {
			for _, l := range lines {
				g.plantAfter(eval.FactErrorCode, l)
			}
		}
	}
	// The answer closing the turn: a conclusion, or a plain report.
	var text string
	if g.chance(0.6) {
		p := g.phrase("decision")
		text = p.Text
		defer g.plantAfter(eval.FactDecision, p.Fact)
	} else {
		text = g.phrase("chatter").Text
	}
	g.emit(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{Messages: []*ctxcv1.Message{textMessage(ctxcv1.Role_ROLE_ASSISTANT, text)},
		FinishReason: ctxcv1.FinishReason_FINISH_REASON_STOP, Usage: &ctxcv1.Usage{InputTokenCount: uint32(g.total), OutputTokenCount: 80}}}})
}

// call picks the output of the next tool call: about one in nine a failure
// not used before in the session, otherwise an output that went through.
func (g *gen) call() corpus.Case {
	if g.chance(0.11) {
		if c, ok := g.failure(); ok {
			return c
		}
	}
	fam := g.family()
	if ps := g.passed[fam]; len(ps) > 0 {
		return ps[g.r.IntN(len(ps))]
	}
	return g.passed[g.stack.families[0]][g.r.IntN(len(g.passed[g.stack.families[0]]))]
}

func (g *gen) family() string {
	if g.chance(g.stack.main) {
		return g.stack.families[0]
	}
	return g.stack.families[1+g.r.IntN(len(g.stack.families)-1)]
}

// failure picks a failed output not used before, from the stack's main
// family more often than not.
func (g *gen) failure() (corpus.Case, bool) {
	for i := 0; i < 8; i++ {
		fs := g.failed[g.family()]
		if len(fs) == 0 {
			continue
		}
		c := fs[g.r.IntN(len(fs))]
		if !g.usedFail[c.ID] {
			g.usedFail[c.ID] = true
			return c, true
		}
	}
	return corpus.Case{}, false
}

// leadingLocation is a diagnostic's location: "path:12:5: ", "path:[12,5] ".
var leadingLocation = regexp.MustCompile(`^(?:\[\w+\]\s+)?\S+?(?::\d+)+:?\s+|^(?:\[\w+\]\s+)?\S+?:\[\d+,\d+\]\s+`)

// identifying returns a failure's labelled lines that are facts: a line
// that repeats an earlier one's message at another location is not (the
// same diagnostic twenty times is one fact, with a count), and a line too
// long to quote whole (ESLint's json formatter prints 4.6 KB on one line) is
// one by its beginning, which names it.
func identifying(c corpus.Case) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range c.Meta.Identifying {
		msg := leadingLocation.ReplaceAllString(l, "")
		if msg != l && seen[msg] {
			continue
		}
		seen[msg] = true
		if r := []rune(l); len(r) > maxQuotedRunes {
			l = string(r[:quotedHeadRunes])
		}
		out = append(out, l)
	}
	return out
}

// A labelled line over maxQuotedRunes is a fact by its first quotedHeadRunes.
const (
	maxQuotedRunes  = 400
	quotedHeadRunes = 120
)

func textPart(s string) *ctxcv1.Part { return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}} }

func textMessage(role ctxcv1.Role, text string) *ctxcv1.Message {
	return &ctxcv1.Message{Role: role, Parts: []*ctxcv1.Part{textPart(text)}}
}

// emit appends an input to the session and accounts for its size.
func (g *gen) emit(req *ctxcv1.RouteRequest) {
	var msgs []*ctxcv1.Message
	switch {
	case req.GetUserTurn() != nil:
		msgs = req.GetUserTurn().GetMessages()
	case req.GetStep() != nil:
		msgs = req.GetStep().GetMessages()
	}
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			var t string
			switch c := p.GetContent().(type) {
			case *ctxcv1.Part_Text:
				t = c.Text
			case *ctxcv1.Part_ToolCall:
				t = c.ToolCall.GetName() + " " + c.ToolCall.GetArgumentsJson()
			case *ctxcv1.Part_ToolResult:
				t = c.ToolResult.GetContent()
			}
			g.total += g.count(t) + 4
			g.logText.WriteString(" " + eval.Collapse(t))
		}
	}
	g.lines = append(g.lines, eval.Line{Route: req, Number: len(g.lines) + 2})
}

// Package synth generates long coding-agent sessions with planted facts, in
// the session format of package eval: a Route log (user turns, agent steps
// with parallel tool calls and their results, events) whose header lists the
// facts a compiled context should keep.
//
// A session is a deterministic function of its Options (the seed included):
// a fictional project (language, packages, files, symbols, people), a first
// task, a pinned note, user turns that mix requests, pasted logs, questions,
// filler and constraints phrased many ways, assistant steps with one to four
// parallel tool calls whose outputs look like the project's source, test
// logs, listings, JSON and HTTP bodies, failures with error identifiers in
// many formats (some resolved by a later call, some left open), decisions
// stated in varied forms, and final answers. Every fact's text is a sentence,
// clause or identifier exactly as it appears in the log, first at its turn.
package synth

import (
	"errors"
	"fmt"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/eval"
)

// Sizes is the distribution of tool output sizes, in tokens: mostly Small
// (skewed towards its low end: for 200-2,000 a median of about 350), a
// MediumShare of Medium, a LargeShare of Large (uniform). Writes and patches
// answer briefly whatever the distribution.
type Sizes struct {
	Small, Medium, Large    [2]int
	MediumShare, LargeShare float64
}

// Options shape a generated session. The zero value of a field takes its
// default (DefaultOptions); Seed 0 is a seed like any other.
type Options struct {
	Seed  uint64
	Turns int // default 40
	// Model is the session's model name; default "gpt-4o".
	Model string
	// TotalTokens is the range the whole session (system prompt, tools and
	// every message, as Count counts) must land in; a session outside it is
	// generated again from the next sub-seed. Zero: no target. Default:
	// 100,000–150,000 tokens for 40 turns, scaled by Turns/40.
	TotalTokens [2]int
	ToolOutputs Sizes
	// FailureRate is the share of tool calls that fail (scaled per tool:
	// tests, shell and HTTP fail more often than reads); default 0.12.
	FailureRate float64
	// ParallelRate is the share of tool steps that make more than one call
	// (two to four); default 0.45.
	ParallelRate float64
	// EventRate is the share of turns with an out-of-band event; default 0.15.
	EventRate float64
	// StepErrorRate is the share of turns whose last step fails
	// (FINISH_REASON_ERROR); default 0.03.
	StepErrorRate float64
	// InterruptRate is the share of turns the user interrupts before the
	// final answer; default 0.03.
	InterruptRate float64
	// Count counts the tokens of a text, for step usage and TotalTokens;
	// default len/4. ctxc eval passes the CountTokens RPC of the session's model.
	Count func(string) int
}

// DefaultOptions are the defaults for a seed.
func DefaultOptions(seed uint64) Options {
	return Options{
		Seed:          seed,
		Turns:         40,
		Model:         "gpt-4o",
		TotalTokens:   [2]int{100_000, 150_000},
		ToolOutputs:   Sizes{Small: [2]int{200, 2_000}, Medium: [2]int{5_000, 15_000}, Large: [2]int{28_000, 32_000}, MediumShare: 0.027, LargeShare: 0.009},
		FailureRate:   0.12,
		ParallelRate:  0.45,
		EventRate:     0.15,
		StepErrorRate: 0.03,
		InterruptRate: 0.03,
		Count:         func(s string) int { return (len(s) + 3) / 4 },
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions(o.Seed)
	if o.Turns == 0 {
		o.Turns = d.Turns
	}
	if o.Model == "" {
		o.Model = d.Model
	}
	if o.TotalTokens == [2]int{} && o.ToolOutputs == (Sizes{}) {
		o.TotalTokens = [2]int{d.TotalTokens[0] * o.Turns / 40, d.TotalTokens[1] * o.Turns / 40}
	}
	if o.ToolOutputs == (Sizes{}) {
		o.ToolOutputs = d.ToolOutputs
	}
	if o.FailureRate == 0 {
		o.FailureRate = d.FailureRate
	}
	if o.ParallelRate == 0 {
		o.ParallelRate = d.ParallelRate
	}
	if o.EventRate == 0 {
		o.EventRate = d.EventRate
	}
	if o.StepErrorRate == 0 {
		o.StepErrorRate = d.StepErrorRate
	}
	if o.InterruptRate == 0 {
		o.InterruptRate = d.InterruptRate
	}
	if o.Count == nil {
		o.Count = d.Count
	}
	return o
}

func (o Options) validate() error {
	var problems []error
	if o.Turns < 1 || o.Turns > 10_000 {
		problems = append(problems, fmt.Errorf("turns: %d must be between 1 and 10000", o.Turns))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"failure_rate", o.FailureRate}, {"parallel_rate", o.ParallelRate}, {"event_rate", o.EventRate}, {"step_error_rate", o.StepErrorRate}, {"interrupt_rate", o.InterruptRate}, {"tool_outputs.medium_share", o.ToolOutputs.MediumShare}, {"tool_outputs.large_share", o.ToolOutputs.LargeShare}} {
		if p.v < 0 || p.v > 1 {
			problems = append(problems, fmt.Errorf("%s: %g must be between 0 and 1", p.name, p.v))
		}
	}
	for _, s := range []struct {
		name string
		r    [2]int
	}{{"tool_outputs.small", o.ToolOutputs.Small}, {"tool_outputs.medium", o.ToolOutputs.Medium}, {"tool_outputs.large", o.ToolOutputs.Large}, {"total_tokens", o.TotalTokens}} {
		if s.r[0] < 0 || s.r[1] < s.r[0] {
			problems = append(problems, fmt.Errorf("%s: [%d, %d] is not a range", s.name, s.r[0], s.r[1]))
		}
	}
	return errors.Join(problems...)
}

// maxAttempts bounds how often a session is generated again to land in
// TotalTokens; the closest attempt is kept after that.
const maxAttempts = 40

// Generate makes a session. It is deterministic: the same Options give the
// same session, byte for byte once written.
func Generate(opts Options) (*eval.Session, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	var best *eval.Session
	bestDist := -1
	for attempt := uint64(0); attempt < maxAttempts; attempt++ {
		s := newGen(opts, attempt).session()
		total := Size(s, opts.Count)
		dist := 0
		switch lo, hi := opts.TotalTokens[0], opts.TotalTokens[1]; {
		case hi == 0:
		case total < lo:
			dist = lo - total
		case total > hi:
			dist = total - hi
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

// Size is the tokens of a session as the generator targets them: the system
// prompt, the tool definitions and every routed message, event and step
// error, each text counted with count plus a few tokens of framing.
func Size(s *eval.Session, count func(string) int) int {
	g := &gen{opts: Options{Count: count}}
	n := count(s.Header.SystemPrompt)
	for _, t := range s.Header.Tools {
		n += toolTokens(t, count)
	}
	for _, l := range s.Lines {
		switch {
		case l.Route.GetUserTurn() != nil:
			for _, m := range l.Route.GetUserTurn().GetMessages() {
				n += g.messageTokens(m)
			}
		case l.Route.GetStep() != nil:
			for _, m := range l.Route.GetStep().GetMessages() {
				n += g.messageTokens(m)
			}
			if e := l.Route.GetStep().GetError(); e != "" {
				n += stepErrorTokens(e, count)
			}
		case l.Route.GetEvent() != nil:
			n += count(l.Route.GetEvent().GetText()) + 4
		}
	}
	return n
}

func toolTokens(t *ctxcv1.ToolDefinition, count func(string) int) int {
	return count(t.GetName()+t.GetDescription()+t.GetParametersJson()) + 8
}

// stepErrorTokens is the event Route appends for a failed step.
func stepErrorTokens(text string, count func(string) int) int {
	return count("The agent step failed: "+text) + 4
}

// gen is one generation attempt.
type gen struct {
	opts Options
	r    rnd
	w    *world

	header eval.Header
	lines  []eval.Line
	used   map[string]bool // fact texts planted so far: each is planted once
	// logText is the collapsed text of everything routed so far; a fact is
	// planted only where its text first appears.
	logText strings.Builder
	turn    int
	// total is the tokens of everything routed so far (the prompt a runtime
	// without compaction would send), for step usage.
	total   int
	callSeq int
	open    []string // tools with an unresolved failure
}

func newGen(opts Options, attempt uint64) *gen {
	r := newRnd(opts.Seed, attempt)
	return &gen{opts: opts, r: r, w: newWorld(r), used: map[string]bool{}}
}

func (g *gen) session() *eval.Session {
	w := g.w
	g.header = eval.Header{
		ID:          fmt.Sprintf("synth-%d", g.opts.Seed),
		Description: fmt.Sprintf("Generated by eval/synth (seed %d, %d turns): a %s coding agent working on %s.", g.opts.Seed, g.opts.Turns, w.slots()["lang"], w.project),
		Model:       &ctxcv1.ModelSpec{Name: g.opts.Model},
		Tools:       toolDefinitions(),
	}
	g.header.SystemPrompt = g.systemPrompt()
	g.total = g.count(g.header.SystemPrompt)
	for _, t := range g.header.Tools {
		g.total += toolTokens(t, g.opts.Count)
	}
	pinnedTurn := g.r.between(1, min(3, g.opts.Turns))
	for g.turn = 1; g.turn <= g.opts.Turns; g.turn++ {
		g.execution(g.userTurn(g.turn == pinnedTurn))
	}
	return &eval.Session{Header: g.header, Lines: g.lines, Name: g.header.ID}
}

func (g *gen) count(s string) int { return g.opts.Count(s) }

func (g *gen) systemPrompt() string {
	w, r := g.w, g.r
	s := w.slots()
	intro := fill(pick(r, []string{
		"You are a senior software engineer working as an autonomous coding agent in the {project} repository ({lang}).",
		"You are {project}-bot, a coding assistant with shell and file access to the {project} repo.",
		"You are an AI pair programmer for the {project} team. The codebase is {lang}.",
	}), s)
	rules := some(r, []string{
		"Read the relevant code before you change it.",
		"Prefer small, reviewable changes.",
		"Run the tests after every change and report failures honestly.",
		"Use the tools; do not guess file contents.",
		"When a tool fails, read the error and decide whether to retry.",
		"Explain what you changed and why in your final answer.",
		"Ask before doing anything destructive.",
		"Keep answers concise; use bullet points for lists of changes.",
	}, r.between(4, 7))
	return intro + "\n\n" + strings.Join(rules, "\n") + "\n\nThe repository is checked out at /workspace/" + w.project + "."
}

// plant records a fact whose text appears in the message being built; it
// returns false (and plants nothing) when the text was already planted.
func (g *gen) plant(kind eval.FactKind, text string) bool {
	text = strings.TrimSpace(text)
	if text == "" || g.used[text] || strings.Contains(g.logText.String(), strings.Join(strings.Fields(text), " ")) {
		return false
	}
	g.used[text] = true
	g.header.Facts = append(g.header.Facts, eval.Fact{ID: fmt.Sprintf("f%d", len(g.header.Facts)+1), Kind: kind, Text: text, Turn: g.turn})
	return true
}

// fresh fills a template until its text has not been planted (a few tries);
// ok is false when every try repeated a fact.
func (g *gen) fresh(tmpls []string) (text string, ok bool) {
	for i := 0; i < 8; i++ {
		text = fill(pick(g.r, tmpls), g.w.slots())
		if !g.used[text] {
			return text, true
		}
	}
	return text, false
}

func (g *gen) constraintSentence(asItem bool) string {
	for i := 0; i < 8; i++ {
		c := pick(g.r, constraints)
		sentence, clause := g.embedConstraint(c, g.w.slots(), asItem)
		if !g.used[clause] && !g.used[upperFirst(clause)] {
			g.plant(eval.FactConstraint, clause)
			return sentence
		}
	}
	return ""
}

func textMessage(role ctxcv1.Role, text string) *ctxcv1.Message {
	return &ctxcv1.Message{Role: role, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: text}}}}
}

func (g *gen) emit(req *ctxcv1.RouteRequest) {
	var msgs []*ctxcv1.Message
	switch {
	case req.GetUserTurn() != nil:
		msgs = req.GetUserTurn().GetMessages()
	case req.GetStep() != nil:
		msgs = req.GetStep().GetMessages()
		g.logText.WriteString(" " + req.GetStep().GetError())
	case req.GetEvent() != nil:
		g.logText.WriteString(" " + req.GetEvent().GetText())
	}
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			t := p.GetText() + " " + p.GetReasoning().GetText() + " " + p.GetToolCall().GetArgumentsJson() + " " + p.GetToolResult().GetContent()
			g.logText.WriteString(" " + strings.Join(strings.Fields(t), " "))
		}
	}
	// Line numbers as in the written file, whose line 1 is the header.
	g.lines = append(g.lines, eval.Line{Route: req, Number: len(g.lines) + 2})
}

func (g *gen) addTokens(msgs ...*ctxcv1.Message) {
	for _, m := range msgs {
		g.total += g.messageTokens(m)
	}
}

func (g *gen) messageTokens(m *ctxcv1.Message) int {
	n := 4 // role and framing
	for _, p := range m.GetParts() {
		switch c := p.GetContent().(type) {
		case *ctxcv1.Part_Text:
			n += g.count(c.Text)
		case *ctxcv1.Part_Reasoning:
			n += g.count(c.Reasoning.GetText())
		case *ctxcv1.Part_ToolCall:
			n += g.count(c.ToolCall.GetName()+c.ToolCall.GetArgumentsJson()) + 6
		case *ctxcv1.Part_ToolResult:
			n += g.count(c.ToolResult.GetContent()) + 4
		}
	}
	return n
}

// What a user turn asks for, which shapes the agent's answer.
const (
	askWork     = iota // a task or request: tool steps, then a report
	askQuestion        // a question: maybe a few reads, then an explanation
	askNothing         // an acknowledgement: maybe no tool at all
)

// userTurn routes the turn's user message(s): the first task on turn 1, a
// request of some kind later; constraints, other facts, filler and pasted
// output mixed in; and the pinned note when its turn comes. It returns what
// the turn asks for.
func (g *gen) userTurn(withPinned bool) int {
	ask := askWork
	r, w := g.r, g.w
	var sentences []string
	var tail string // a pasted block, or a list, after the prose
	if g.turn == 1 {
		task := fill(pick(r, tasks), w.slots())
		g.plant(eval.FactFirstTask, task)
		sentences = append(sentences, pick(r, taskLeads)+task+pick(r, []string{".", ".", "!", ". Thanks!"}))
		for _, e := range some(r, elaborations, r.between(0, 3)) {
			sentences = append(sentences, fill(e, w.slots()))
		}
		n := r.between(1, 3)
		if r.chance(0.35) && n > 1 {
			var items []string
			for i := 0; i < n; i++ {
				if s := g.constraintSentence(true); s != "" {
					items = append(items, s)
				}
			}
			tail = pick(r, []string{"A few constraints:", "Ground rules:", "Things to keep in mind:", "Before you start:"}) + "\n" + g.paragraph(items, true)
		} else {
			for i := 0; i < n; i++ {
				if s := g.constraintSentence(false); s != "" {
					sentences = append(sentences, s)
				}
			}
		}
	} else {
		switch r.weighted(0.5, 0.1, 0.16, 0.12, 0.12) {
		case 0: // a follow-up request
			sentences = append(sentences, fill(pick(r, followUps), w.slots()))
		case 1: // a question
			sentences = append(sentences, fill(pick(r, questions), w.slots()))
			ask = askQuestion
		case 2: // pasted output with a request
			sentences = append(sentences, fill(pick(r, []string{"Something's off.", "Still failing.", "Look at this.", "New problem.", "This came up in staging."}), w.slots()))
			body := ""
			if r.chance(0.6) {
				f := w.failureFor(pick(r, []string{"run_tests", "http_get", "shell", "run_sql"}), "", r.between(400, 3000))
				body = f.content
				g.plant(eval.FactErrorCode, f.fact)
			} else {
				body = w.buildLog(r.between(400, 4000))
			}
			tail = fill(pick(r, pastedIntros), w.slots()) + "\n\n```\n" + strings.TrimRight(body, "\n") + "\n```\n\n" + fill(pick(r, []string{"What's going on?", "Can you fix it?", "Any idea?", "Please investigate.", "Is this related to your change?"}), w.slots())
		case 3: // a short acknowledgement
			sentences = append(sentences, pick(r, []string{"ok", "Sounds good, go ahead.", "yes", "Fine by me.", "Do it.", "👍 continue", "Agreed."}))
			ask = askNothing
		default: // a long message with context
			sentences = append(sentences, fill(pick(r, followUps), w.slots()))
			for _, f := range some(r, fillers, r.between(2, 5)) {
				sentences = append(sentences, fill(f, w.slots()))
			}
			for _, e := range some(r, elaborations, r.between(1, 2)) {
				sentences = append(sentences, fill(e, w.slots()))
			}
		}
		switch {
		case r.chance(0.05) && tail == "":
			var items []string
			for i := 0; i < 2; i++ {
				if s := g.constraintSentence(true); s != "" {
					items = append(items, s)
				}
			}
			if len(items) > 0 {
				tail = pick(r, []string{"Two more things:", "Constraints from the review:", "Please also respect these:"}) + "\n" + g.paragraph(items, true)
			}
		case r.chance(0.26):
			if s := g.constraintSentence(false); s != "" {
				at := r.IntN(len(sentences) + 1)
				sentences = append(sentences[:at], append([]string{s}, sentences[at:]...)...)
			}
		}
	}
	if r.chance(0.1) || (g.turn == 2 && r.chance(0.5)) {
		if text, ok := g.fresh(others); ok {
			lead := pick(r, []string{"", "FYI: ", "For the record, ", "Also good to know: "})
			if lead != "" {
				text = lowerFirstIf(text)
			}
			g.plant(eval.FactOther, text)
			sentences = append(sentences, lead+text+".")
		}
	}
	for i := 0; i < r.weighted(0.6, 0.3, 0.1); i++ {
		sentences = append(sentences, fill(pick(r, fillers), w.slots()))
	}
	// Shuffle everything but the first sentence now and then, so constraints
	// are not always in one place.
	if len(sentences) > 2 && r.chance(0.4) {
		rest := sentences[1:]
		r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	}
	text := g.paragraph(sentences, false)
	if len(sentences) > 3 && r.chance(0.3) {
		at := r.between(1, len(sentences)-1)
		text = g.paragraph(sentences[:at], false) + "\n\n" + g.paragraph(sentences[at:], false)
	}
	if tail != "" {
		text += "\n\n" + tail
	}
	msgs := []*ctxcv1.Message{textMessage(ctxcv1.Role_ROLE_USER, text)}
	if withPinned {
		msgs = append(msgs, g.pinnedNote())
	}
	g.addTokens(msgs...)
	g.emit(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: msgs}}})
	return ask
}

// lowerFirstIf lower-cases a leading article, leaving names alone.
func lowerFirstIf(s string) string {
	for _, a := range []string{"The ", "Our "} {
		if strings.HasPrefix(s, a) {
			return lowerFirst(s)
		}
	}
	return s
}

func (g *gen) pinnedNote() *ctxcv1.Message {
	r, w := g.r, g.w
	note := pick(r, pinnedNotes)
	slots := w.slots()
	lines := []string{fill(note[0], slots)}
	for _, l := range note[1:] {
		fact := strings.HasPrefix(l, "*")
		text := fill(strings.TrimPrefix(l, "*"), slots)
		if fact {
			g.plant(eval.FactPinned, text)
		}
		lines = append(lines, "- "+text)
	}
	m := textMessage(ctxcv1.Role_ROLE_USER, strings.Join(lines, "\n"))
	m.Pinned = true
	return m
}

// execution routes the agent's steps for the turn, then how it ends: a final
// answer, a failed step, or nothing (the next user turn interrupts it).
func (g *gen) execution(ask int) {
	r := g.r
	var steps int
	switch ask {
	case askWork:
		steps = 1 + r.weighted(0.25, 0.35, 0.22, 0.12, 0.06)
	case askQuestion:
		steps = r.weighted(0.3, 0.4, 0.3)
	default:
		steps = r.weighted(0.5, 0.3, 0.2)
	}
	if g.turn == 1 {
		steps = max(steps, 2)
	}
	eventAt := -1
	if r.chance(g.opts.EventRate) {
		eventAt = r.IntN(steps + 1)
	}
	for s := 0; s < steps; s++ {
		if s == eventAt {
			g.event()
		}
		phase := checkTools
		switch {
		case s == 0:
			phase = exploreTools
		case s < steps-1 && r.chance(0.5):
			phase = changeTools
		}
		g.toolStep(phase)
	}
	switch {
	case r.chance(g.opts.StepErrorRate):
		g.failedStep()
	case r.chance(g.opts.InterruptRate) && g.turn < g.opts.Turns:
		// interrupted: the next user turn arrives while this one runs
	case ask == askQuestion:
		g.explanation()
	case steps == 0:
		g.reply()
	default:
		g.finalAnswer()
	}
	if eventAt == steps {
		g.event()
	}
}

func (g *gen) callID() string {
	g.callSeq++
	if strings.HasPrefix(g.opts.Model, "claude") {
		return "toolu_01" + g.r.token(22, alnum)
	}
	return "call_" + g.r.token(24, alnum)
}

// outputSize draws a tool output size in tokens.
func (g *gen) outputSize() int {
	s := g.opts.ToolOutputs
	switch g.r.weighted(1-s.MediumShare-s.LargeShare, s.MediumShare, s.LargeShare) {
	case 1:
		return g.r.between(s.Medium[0], s.Medium[1])
	case 2:
		return g.r.between(s.Large[0], s.Large[1])
	}
	return g.r.logSkewed(s.Small[0], s.Small[1])
}

// charsPerToken is roughly how many characters a token of generated output
// spans (code and prose about 3.6; JSON with random ids fewer).
func charsPerToken(tool string) float64 {
	switch tool {
	case "http_get", "run_sql":
		return 2.6
	case "list_dir", "grep":
		return 3.0
	}
	return 3.5
}

func (g *gen) toolStep(phase []string) {
	r, w := g.r, g.w
	n := 1
	if r.chance(g.opts.ParallelRate) {
		n = 2 + r.weighted(0.55, 0.3, 0.15)
	}
	var parts []*ctxcv1.Part
	narration := fill(pick(r, narrations), w.slots())
	retrying := len(g.open) > 0 && r.chance(0.35)
	if retrying {
		narration = pick(r, retryNarrations)
	}
	resolved := false
	if r.chance(0.05) {
		if d := g.decisionSentence(); d != "" {
			narration = strings.TrimSpace(narration + " " + d)
		}
	}
	if narration != "" {
		parts = append(parts, &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: narration}})
	}
	if r.chance(0.08) {
		parts = append([]*ctxcv1.Part{{Content: &ctxcv1.Part_Reasoning{Reasoning: &ctxcv1.Reasoning{Text: fill(pick(r, reasonings), w.slots())}}}}, parts...)
	}
	var results []*ctxcv1.Part
	for i := 0; i < n; i++ {
		tool := pick(r, phase)
		// Retry an open failure now and then: that call succeeds.
		retry := false
		if retrying && i == 0 {
			tool, retry = g.open[0], true
		}
		spec := toolByName(tool)
		args, subject := w.callArgs(tool)
		id := g.callID()
		parts = append(parts, &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: id, Name: tool, ArgumentsJson: args}}})
		size := int(float64(g.outputSize()) * charsPerToken(tool))
		res := &ctxcv1.ToolResult{ToolCallId: id, Name: tool}
		if !retry && r.chance(g.opts.FailureRate*spec.failWeight) {
			f := w.failureFor(tool, subject, size)
			res.Content, res.IsError = f.content, true
			if g.plant(eval.FactErrorCode, f.fact) {
				g.open = append(g.open, tool)
			}
		} else {
			if !spec.sized {
				size = 0
			}
			res.Content = w.output(tool, subject, size)
			if g.resolve(tool) {
				resolved = true
			}
		}
		results = append(results, &ctxcv1.Part{Content: &ctxcv1.Part_ToolResult{ToolResult: res}})
	}
	if resolved && r.chance(0.5) {
		parts = append([]*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: pick(r, resolutions)}}}, parts...)
	}
	assistant := &ctxcv1.Message{Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: parts}
	msgs := []*ctxcv1.Message{assistant}
	if len(results) > 1 && r.chance(0.2) {
		// Some runtimes send every result of a step in one tool message.
		msgs = append(msgs, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_TOOL, Parts: results})
	} else {
		for _, p := range results {
			msgs = append(msgs, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_TOOL, Parts: []*ctxcv1.Part{p}})
		}
	}
	g.routeStep(msgs, ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS)
}

// resolve drops tool's oldest open failure; a later successful call of the
// same tool is what resolves a failure.
func (g *gen) resolve(tool string) bool {
	for i, t := range g.open {
		if t == tool {
			g.open = append(g.open[:i], g.open[i+1:]...)
			return true
		}
	}
	return false
}

// routeStep routes a step with the usage a provider would report for it: the
// whole prompt so far as input, the assistant message as output.
func (g *gen) routeStep(msgs []*ctxcv1.Message, finish ctxcv1.FinishReason) {
	usage := &ctxcv1.Usage{InputTokenCount: uint32(g.total), OutputTokenCount: uint32(g.messageTokens(msgs[0]))}
	g.addTokens(msgs...)
	g.emit(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{Messages: msgs, FinishReason: finish, Usage: usage}}})
}

func (g *gen) decisionSentence() string {
	for i := 0; i < 8; i++ {
		d := fill(pick(g.r, decisions), g.w.slots())
		if g.used[d] {
			continue
		}
		g.plant(eval.FactDecision, d)
		if head, _, labelled := strings.Cut(d, ": "); labelled && !strings.Contains(head, " ") {
			return d + "." // "Root cause: ..." carries its own label
		}
		return fmt.Sprintf(pick(g.r, decisionForms), d)
	}
	return ""
}

func (g *gen) reply() {
	text := fill(pick(g.r, replies), g.w.slots())
	if g.r.chance(0.15) {
		if d := g.decisionSentence(); d != "" {
			text += " " + d
		}
	}
	g.routeStep([]*ctxcv1.Message{textMessage(ctxcv1.Role_ROLE_ASSISTANT, text)}, ctxcv1.FinishReason_FINISH_REASON_STOP)
}

func (g *gen) explanation() {
	r, w := g.r, g.w
	var parts []string
	if r.chance(0.6) {
		parts = append(parts, pick(r, explanationOpeners))
	}
	for _, e := range some(r, explanations, r.between(1, 3)) {
		parts = append(parts, fill(e, w.slots()))
	}
	if r.chance(0.25) {
		if d := g.decisionSentence(); d != "" {
			parts = append(parts, d)
		}
	}
	g.routeStep([]*ctxcv1.Message{textMessage(ctxcv1.Role_ROLE_ASSISTANT, strings.Join(parts, " "))}, ctxcv1.FinishReason_FINISH_REASON_STOP)
}

func (g *gen) finalAnswer() {
	r, w := g.r, g.w
	var b strings.Builder
	b.WriteString(pick(r, finalOpeners))
	if r.chance(0.22) {
		if d := g.decisionSentence(); d != "" {
			b.WriteString(pick(r, []string{" ", "\n\n"}) + d)
		}
	}
	bullets := some(r, finalBullets, r.between(1, 4))
	if len(bullets) > 0 {
		b.WriteString("\n\n")
		for _, x := range bullets {
			b.WriteString(fill(x, w.slots()) + "\n")
		}
	}
	if r.chance(0.2) {
		path := w.file()
		b.WriteString("\nThe core of it, in " + path + ":\n\n```\n" + strings.TrimRight(w.sourceFile(path, r.between(200, 1200)), "\n") + "\n```\n")
	}
	if c := pick(r, finalClosers); c != "" {
		b.WriteString("\n" + fill(c, w.slots()))
	}
	g.routeStep([]*ctxcv1.Message{textMessage(ctxcv1.Role_ROLE_ASSISTANT, strings.TrimSpace(b.String()))}, ctxcv1.FinishReason_FINISH_REASON_STOP)
}

func (g *gen) failedStep() {
	r := g.r
	// Codes no tool failure uses, so the fact first appears here.
	code := pick(r, []string{"HTTP 529", "HTTP 524", "HTTP 408"})
	text := fmt.Sprintf("provider error: %s %s (request id req_%s)", code, pick(r, []string{"overloaded", "internal error", "request timeout"}), r.token(12, alnum))
	if !g.plant(eval.FactErrorCode, text) {
		return
	}
	g.total += stepErrorTokens(text, g.opts.Count)
	g.emit(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Step{Step: &ctxcv1.AgentStep{FinishReason: ctxcv1.FinishReason_FINISH_REASON_ERROR, Error: text}}})
}

func (g *gen) event() {
	text := fill(pick(g.r, events), g.w.slots())
	g.total += g.count(text) + 4
	g.emit(&ctxcv1.RouteRequest{Input: &ctxcv1.RouteRequest_Event{Event: &ctxcv1.Event{Text: text}}})
}

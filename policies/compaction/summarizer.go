package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/facts"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// SummaryRequest is what a Summarizer summarizes.
type SummaryRequest struct {
	// Span is the run of older messages the summary replaces, oldest first,
	// without the earlier summaries inside it (those are in Merge).
	Span []agentstate.Message
	// Merge holds the texts of earlier summaries this one replaces, oldest
	// first: their facts carry over (an iterative summary update).
	Merge []string
	// Earlier holds the texts of summaries that stay before this one: what
	// they hold need not be said again, and errors they list as open may be
	// resolved by the span.
	Earlier []string
	// BudgetTokens caps the summary.
	BudgetTokens int
	// Running holds the call ids, sorted, of the span's and the merged
	// summaries' tool calls that belong to the running task (made since the
	// user's instruction): their failures stay among the errors still open
	// whatever ran after them, since the agent is still at that task.
	Running []string
	// Counter measures text for the target model; nil counts 4 bytes a token.
	Counter agentstate.TokenCounter
	// Count, First and Last are what the summary's label says it stands
	// for: how many messages, the first and the last of them, the span's
	// and those of the summaries it merges (the summaries themselves not
	// counted). With Count 0 the label counts the span and what the merged
	// summaries' labels count, and names the span's ends only when it
	// merges nothing: a merged summary's messages come before the span's.
	Count       int
	First, Last string
}

// Label is how a summary of the request opens: "Summary of 7 earlier
// messages (m2 to m8)", or without the ends when they are not known.
func (r *SummaryRequest) Label() string {
	count, first, last := r.Count, r.First, r.Last
	if count == 0 {
		count = len(r.Span)
		for _, text := range r.Merge {
			if n, ok := labelCount(text); ok {
				count += n
			}
		}
		if len(r.Merge) == 0 && len(r.Span) > 0 {
			first, last = r.Span[0].ID, r.Span[len(r.Span)-1].ID
		}
	}
	if first == "" {
		return fmt.Sprintf(summaryHeader, count)
	}
	return fmt.Sprintf(summaryHeader+" (%s to %s)", count, first, last)
}

// labelCount reads the count of a summary's label (Label; the
// deterministic, the model's and truncate's summaries all open so).
func labelCount(text string) (int, bool) {
	var n int
	_, err := fmt.Sscanf(text, summaryHeader, &n)
	return n, err == nil
}

// Summarizer writes the text of a summary. Implementations must be
// deterministic for equal requests if compiles are to be reproducible and
// prompt caches to stay warm.
type Summarizer interface {
	Summarize(ctx context.Context, req SummaryRequest) (string, error)
}

// pathKeys are the argument names listed as files and resources touched.
func pathKeys() []string {
	return []string{"path", "file_path", "file", "filename", "url", "uri", "dir", "directory", "target", "paths", "files"}
}

// Section titles of the deterministic summary, in the order they are written,
// which is also their importance: when the budget is short, the last sections
// lose items first.
const (
	secConstraints = "User constraints"
	secOpenErrors  = "Errors still open"
	// secUnfixed holds failures no later run showed fixed, while later calls
	// of the same tool went through (other commands ran since): not
	// resolved, but not what invariant 5 keeps visible either: they are
	// listed, shortened and grouped as resolved ones are.
	secUnfixed   = "Errors not seen fixed"
	secDecisions = "Decisions and conclusions"
	secUserNotes = "User notes"
	secResolved  = "Errors resolved"
	secDone      = "Work done"
	secSeen      = "Observed in tool output"
	secTasks     = "Open tasks"
	secEarlier   = "Earlier summary"
	secRequests  = "User requests"
	secNotes     = "Notes"
	secEvents    = "Events"
	secFiles     = "Files and resources"
	secTools     = "Tools run"
)

var sectionOrder = []string{secConstraints, secOpenErrors, secUnfixed, secDecisions, secUserNotes, secResolved, secDone, secSeen, secTasks, secEarlier, secRequests, secNotes, secEvents, secFiles, secTools}

// sectionWeight is what an item of a section is worth before facts.Weight
// adds what its own wording says; the budget goes to the heaviest items.
var sectionWeight = map[string]int{
	secConstraints: 100, secDecisions: 80, secUserNotes: 80, secUnfixed: 75, secResolved: 75, secDone: 75, secEarlier: 60, secTasks: 55,
	secSeen: 45, secEvents: 40, secRequests: 30, secNotes: 25, secFiles: 10, secTools: 5,
}

// sectionClass is the class facts.Weight reads an item of a section as.
func sectionClass(section string) facts.Class {
	switch section {
	case secConstraints:
		return facts.Constraint
	case secDecisions, secDone:
		return facts.Decision // what an answer concluded or did
	case secRequests:
		return facts.Request
	}
	return facts.Other
}

// legacySections maps the section titles of summaries written by earlier
// versions to where their items go now ("" reads them again as user text).
var legacySections = map[string]string{
	"User instructions": "",
	"Decisions":         secDecisions,
}

// mergeOrder is every section title a summary may hold, current then legacy.
var mergeOrder = append(append([]string(nil), sectionOrder...), "User instructions", "Decisions")

// summaryHeader opens every deterministic summary; parseSummary recognizes it.
const summaryHeader = "Summary of %d earlier messages"

// maxItemRunes bounds one item; longer sentences are cut, marked.
const maxItemRunes = 600

// resolvedMark ends the item of a failure a later call of its tool resolved.
const resolvedMark = " (resolved later)"

// groupSep separates the failures of one tool in a grouped item: a line
// each, as the lines of one failure, so that a merge reads them apart again
// (a separator within a line would be one that error messages use too).
const groupSep = "\n"

// DeterministicSummarizer is the default Summarizer: it needs no model. It
// keeps facts before prose: the sentences in which the user required,
// forbade or preferred something, verbatim; every failed tool call with its
// call id and the line that names its error, and whether a later call of the
// same tool resolved it; the decisions and conclusions the assistant stated,
// verbatim; what the user stated as context; open tasks; then, as the budget
// allows, the user's requests, other statements that carry identifiers,
// events, the files and resources touched and the tools run. Greetings,
// thanks, narration ("let me look at the file") and list lead-ins are
// dropped. When the budget is short the least important sections lose items
// first, and the summary says how many items it left out; failures still open
// are never left out (invariant 5).
type DeterministicSummarizer struct {
	// Memo remembers what was read from messages across requests; nil
	// reads every message afresh.
	Memo *Memo
}

// Summarize implements Summarizer.
func (d DeterministicSummarizer) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	text, _ := d.fit(ctx, req)
	return text, ctx.Err()
}

// factWeight is the least weight of an item that holds a fact: resolved
// errors and everything above them (constraints, open errors, decisions, what
// the user stated).
const factWeight = 75

// fit writes the summary and says the heaviest weight it left out. The same
// request is answered from the Memo: every compile replays the same
// compaction points.
//
// A summary of a long span takes long; once ctx ends, fit stops reading,
// returns nothing and remembers nothing (its caller's run is over).
func (d DeterministicSummarizer) fit(ctx context.Context, req SummaryRequest) (string, int) {
	if ctx.Err() != nil {
		return "", 0
	}
	var key uint64
	if d.Memo != nil {
		key = d.Memo.requestKey(&req)
		if f, ok := d.Memo.summary(key); ok {
			return f.text, f.lost
		}
	}
	b := newSummaryBuilder(req)
	b.memo = d.Memo
	for _, id := range req.Running {
		b.running[id] = true
	}
	for _, text := range req.Merge {
		b.merge(text)
	}
	if !b.read(ctx, req.Span) {
		return "", 0
	}
	b.resolveEarlier(req.Earlier)
	b.dropKnown(req.Earlier)
	text := b.render(req.Label(), req.BudgetTokens)
	d.Memo.remember(key, fitted{text, b.droppedWeight})
	return text, b.droppedWeight
}

type summaryBuilder struct {
	memo *Memo
	// droppedWeight is the heaviest weight render left out.
	droppedWeight int
	counter       agentstate.TokenCounter
	items         map[string][]string
	seen          map[string]map[string]bool
	// failures by call id, in order; a later success of the same tool
	// resolves the earlier ones (as policies.UnresolvedFailures does).
	failures  []*failure
	byCall    map[string]*failure
	tools     map[string]*toolCount
	toolOrder []string
	// succeeded holds the calls (failureKey) that went through in the span.
	succeeded map[string]bool
	// running holds SummaryRequest.Running.
	running map[string]bool
	// priorOmitted counts, by section, the items merged summaries had left
	// out, and priorOmittedTokens about what they took.
	priorOmitted       map[string]int
	priorOmittedTokens int
}

// failure is one failed call: item is its text without the resolved mark,
// key what resolves it (failureKey). A failure not resolved is unfixed when
// a later call of its tool went through (another command): invariant 5 no
// longer keeps it visible, so a short budget may shorten or leave it out.
type failure struct {
	tool, call, item, key string
	resolved, unfixed     bool
}

// failureKey is what resolves a failure: a later success of the same call,
// the tool with its key argument as describeCall names it (the same command
// run again, the same file read), not any later call of the tool. An agent's
// shell tool runs forty different commands in a task; the fortieth going
// through fixes none of the others.
func failureKey(item string) string {
	if i := strings.Index(item, " [call "); i > 0 {
		return item[:i]
	}
	return errorTool(item)
}

type toolCount struct{ runs, failed int }

func newSummaryBuilder(req SummaryRequest) *summaryBuilder {
	return &summaryBuilder{
		counter: req.Counter,
		items:   map[string][]string{},
		seen:    map[string]map[string]bool{},
		byCall:  map[string]*failure{},
		tools:   map[string]*toolCount{},
		running: map[string]bool{},
	}
}

func (b *summaryBuilder) add(section, item string) {
	item = strings.Join(strings.Fields(item), " ")
	if item == "" {
		return
	}
	if utf8.RuneCountInString(item) > maxItemRunes {
		item = shorten(item, maxItemRunes)
	}
	if b.seen[section] == nil {
		b.seen[section] = map[string]bool{}
	}
	if b.seen[section][item] {
		return
	}
	b.seen[section][item] = true
	b.items[section] = append(b.items[section], item)
}

// addFailure records a failed call once, by call id (or by its text when it
// has none); a failure known as resolved stays resolved. An item is one line
// a finding: the first names the call, the others continue it.
func (b *summaryBuilder) addFailure(tool, call, item string, resolved bool) *failure {
	item = normalizeLines(item)
	for strings.HasSuffix(item, resolvedMark) {
		item, resolved = strings.TrimSuffix(item, resolvedMark), true
	}
	key := call
	if key == "" {
		key = "\x00" + item // a compact resolved item: known by its text
	}
	if f, ok := b.byCall[key]; ok {
		f.resolved = f.resolved || resolved
		return f
	}
	f := &failure{tool: tool, call: call, item: item, key: failureKey(item), resolved: resolved}
	b.failures = append(b.failures, f)
	b.byCall[key] = f
	return f
}

// normalizeLines collapses the white space within each line of a text and
// drops its empty lines.
func normalizeLines(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// merge carries the facts of an earlier summary into this one.
func (b *summaryBuilder) merge(text string) {
	items, _, ok := parseSummary(text)
	if !ok {
		b.add(secEarlier, strings.TrimSpace(text))
		return
	}
	for _, title := range orderedTitles(items) {
		for _, it := range items[title] {
			b.mergeItem(title, it)
		}
	}
	// What it had left out already stays counted: a summary says how many
	// items all its merges left out, not only its own render.
	sections, tokens := omittedOf(text)
	for title, n := range sections {
		if b.priorOmitted == nil {
			b.priorOmitted = map[string]int{}
		}
		b.priorOmitted[title] += n
	}
	b.priorOmittedTokens += tokens
}

// omittedLine is the line a summary ends with when it left items out.
var omittedLine = regexp.MustCompile(`(?m)^\[\.\.\. \d+ items? \(about ([\d,]+) tokens\) left out to fit the summary budget: (.+)\]$`)

// omittedOf reads a summary's count of items left out, by section.
func omittedOf(text string) (map[string]int, int) {
	m := omittedLine.FindStringSubmatch(text)
	if m == nil {
		return nil, 0
	}
	tokens, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	sections := map[string]int{}
	for _, part := range strings.Split(m[2], ", ") {
		n, name, ok := strings.Cut(part, " ")
		k, err := strconv.Atoi(n)
		if !ok || err != nil {
			continue
		}
		for _, title := range sectionOrder {
			if strings.ToLower(title) == name {
				sections[title] += k
			}
		}
	}
	return sections, tokens
}

// orderedTitles are the section titles of a parsed summary in mergeOrder,
// then any others sorted: what is read from a summary is read in the same
// order every time, so the same log always compiles to the same bytes.
func orderedTitles(items map[string][]string) []string {
	var known, extra []string
	for _, title := range mergeOrder {
		if _, ok := items[title]; ok {
			known = append(known, title)
		}
	}
	for title := range items {
		if !slices.Contains(mergeOrder, title) {
			extra = append(extra, title)
		}
	}
	sort.Strings(extra)
	return append(known, extra...)
}

func (b *summaryBuilder) mergeItem(title, it string) {
	to, legacy := legacySections[title]
	switch {
	case legacy && to == "": // old layout: whole user turns, classified again
		for _, s := range b.memo.classified(it, true) {
			b.addUserSentence(s)
		}
	case legacy:
		b.add(to, it)
	case strings.HasPrefix(title, "Errors"):
		resolved := title == secResolved || strings.HasSuffix(it, resolvedMark) || strings.Contains(it, "; resolved")
		item := strings.TrimSuffix(it, resolvedMark)
		if i := strings.Index(item, "; resolved"); i >= 0 {
			item = item[:i]
		}
		f := b.addFailure(errorTool(item), callID(item), item, resolved)
		f.unfixed = f.unfixed || title == secUnfixed
	case title == secTools:
		b.mergeTools(it)
	case slices.Contains(sectionOrder, title):
		b.add(title, it)
	default:
		b.add(secEarlier, it)
	}
}

// read takes the span's messages in order.
// readCheckEvery is how many messages read between looks at the context.
const readCheckEvery = 256

// read reads span into b; false when ctx ended before it was done.
func (b *summaryBuilder) read(ctx context.Context, span []agentstate.Message) bool {
	calls := map[string]agentstate.ToolCall{}
	keys := pathKeys()
	lastRequest, answered := "", true
	var eventFailures []*failure
	for i := range span {
		if i%readCheckEvery == readCheckEvery-1 && ctx.Err() != nil {
			return false
		}
		m := &span[i]
		switch {
		case m.Kind == agentstate.KindEvent:
			// An event that reports an error (a failed agent step, a provider
			// error) is a failure like a tool's: the agent going on after it
			// resolved it.
			if text := strings.TrimSpace(m.Text()); facts.Trouble(text) {
				f := b.addFailure("", "", diagnose.Elide(strings.Join(strings.Fields(text), " "), 240), false)
				if !f.resolved {
					eventFailures = append(eventFailures, f)
				}
				continue
			}
			for _, s := range facts.Sentences(m.Text()) {
				if facts.Classify(s, false) != facts.Filler {
					b.add(secEvents, s)
				}
			}
		case m.Kind == agentstate.KindSummary:
			b.merge(m.Text())
		case m.Role == agentstate.RoleUser:
			answered = false
			text := m.Text()
			for _, group := range paragraphs(b.memo.classified(text, true)) {
				items, taken := runs(group, facts.Constraint)
				for _, item := range items {
					b.add(secConstraints, item)
				}
				for k, s := range group {
					if taken[k] {
						continue
					}
					if c := b.addUserSentence(s); c == facts.Request {
						lastRequest = s.text
					}
				}
			}
			// A log the user pasted: the lines that report its errors.
			for _, line := range b.memo.pastedErrors(text) {
				b.add(secUserNotes, line)
			}
		case m.Role == agentstate.RoleAssistant:
			for _, f := range eventFailures {
				f.resolved = true
			}
			eventFailures = nil
			for _, p := range m.Parts {
				if p.Kind != agentstate.PartToolCall {
					continue
				}
				calls[p.ToolCall.ID] = p.ToolCall
				for _, v := range argValues(p.ToolCall.ArgumentsJSON, keys) {
					b.add(secFiles, v)
				}
			}
			text := m.Text()
			if m.Mask != nil {
				text = ""
			}
			final := !m.HasToolCalls() && closesTurnIn(span, i)
			for _, group := range paragraphs(b.memo.classified(text, false)) {
				items, taken := runs(group, facts.Decision)
				for _, item := range items {
					b.add(secDecisions, item)
				}
				// What it found and did, in the words around it: "After
				// profiling: 80% is regex compilation. Hoisting it out."
				for _, run := range statementRuns(group, taken) {
					b.addAssistantSentence(run, final)
				}
				for k, s := range group {
					if !taken[k] {
						b.addAssistantSentence(s, final)
					}
				}
			}
			if !m.HasToolCalls() && strings.TrimSpace(text) != "" {
				answered = true
			}
		case m.Role == agentstate.RoleTool:
			for _, p := range m.Parts {
				if p.Kind == agentstate.PartToolResult {
					b.result(p.ToolResult, calls[p.ToolResult.ToolCallID])
				}
			}
		}
	}
	if !answered && lastRequest != "" {
		b.add(secTasks, lastRequest)
	}
	return true
}

// maxParagraphRunes bounds a paragraph kept whole.
const maxParagraphRunes = 320

// paragraphs groups a message's sentences by the paragraph they stand in.
func paragraphs(ss []sentence) [][]sentence {
	var out [][]sentence
	for i, s := range ss {
		if i == 0 || s.paragraph != ss[i-1].paragraph {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	return out
}

// runs finds, in a paragraph's sentences, each sentence of class c with the
// sentences that belong to it: neighbours that state something too (another
// of class c, or a plain statement: "Read-only root filesystem in prod.
// Only /tmp is writable."), and short tags ("Ever.", "No exceptions."). A
// rule or a conclusion is kept in the words around it, not torn from them;
// requests, remarks and filler beside it are not part of it. It returns the
// runs of two sentences or more, joined, and marks the sentences they took.
func runs(group []sentence, c facts.Class) (items []string, taken []bool) {
	taken = make([]bool, len(group))
	belongs := func(s sentence) bool {
		return s.class == c || s.class == facts.Other || len(strings.Fields(s.text)) <= 3 && s.class == facts.Filler
	}
	for i := 0; i < len(group); i++ {
		if group[i].class != c || taken[i] {
			continue
		}
		lo, hi := i, i+1
		for lo > 0 && belongs(group[lo-1]) && !taken[lo-1] && group[lo-1].class != facts.Filler {
			lo--
		}
		for hi < len(group) && belongs(group[hi]) {
			hi++
		}
		if hi-lo < 2 {
			continue
		}
		texts := make([]string, 0, hi-lo)
		for k := lo; k < hi; k++ {
			texts = append(texts, group[k].text)
		}
		item := strings.Join(texts, " ")
		if utf8.RuneCountInString(item) > maxParagraphRunes {
			continue
		}
		for k := lo; k < hi; k++ {
			taken[k] = true
		}
		items = append(items, item)
		i = hi - 1
	}
	return items, taken
}

// statementRuns joins, in a paragraph of the assistant's, the statements
// (Other) no decision took with their short tags and a lead sentence that
// opens with a filler word but says something ("Alright, it was the trailing
// slash."), and marks what it took. A single statement is left to the caller.
func statementRuns(group []sentence, taken []bool) []sentence {
	var out []sentence
	for i := 0; i < len(group); i++ {
		if taken[i] || group[i].class != facts.Other {
			continue
		}
		lo, hi := i, i+1
		if lo > 0 && !taken[lo-1] && group[lo-1].class == facts.Filler && len(strings.Fields(group[lo-1].text)) >= 5 {
			lo--
		}
		for hi < len(group) && !taken[hi] && (group[hi].class == facts.Other || group[hi].class == facts.Filler && len(strings.Fields(group[hi].text)) <= 3) {
			hi++
		}
		if hi-lo < 2 {
			continue
		}
		run := sentence{class: facts.Other, paragraph: group[i].paragraph}
		texts := make([]string, 0, hi-lo)
		for k := lo; k < hi; k++ {
			texts = append(texts, group[k].text)
			run.specific = run.specific || group[k].specific
		}
		run.text = strings.Join(texts, " ")
		if utf8.RuneCountInString(run.text) > maxParagraphRunes {
			continue
		}
		for k := lo; k < hi; k++ {
			taken[k] = true
		}
		out = append(out, run)
		i = hi - 1
	}
	return out
}

// leadIn is a short sentence that only introduces what follows ("Please
// also respect these:").
func leadIn(s string) bool {
	return strings.HasSuffix(strings.TrimSpace(s), ":") && len(strings.Fields(s)) <= 8
}

// addUserSentence files one sentence a user wrote.
func (b *summaryBuilder) addUserSentence(s sentence) facts.Class {
	if leadIn(s.text) {
		return facts.Filler
	}
	switch s.class {
	case facts.Constraint:
		b.add(secConstraints, s.text)
	case facts.Request:
		b.add(secRequests, s.text)
	case facts.Other:
		// A statement of the user's ("Zanele owns elasticsearch and reviews
		// anything that touches it"); one that names nothing particular
		// weighs less (facts.Weight).
		if s.specific || len(strings.Fields(s.text)) >= 5 {
			b.add(secUserNotes, s.text)
		}
	}
	return s.class
}

var taskCues = []string{"next step", "todo", "to do", "remaining", "still need", "not yet", "follow up", "follow-up", "pending", "open question", "blocked", "later"}

// closesTurnIn reports whether no assistant message follows span[i] before
// the next turn starts: its text is the turn's answer.
func closesTurnIn(span []agentstate.Message, i int) bool {
	for k := i + 1; k < len(span); k++ {
		if policies.IsTurnStart(&span[k]) {
			return true
		}
		if span[k].Role == agentstate.RoleAssistant {
			return false
		}
	}
	return true
}

// addAssistantSentence files one sentence of an assistant message; final
// says the message answers its turn, where every substantive sentence is a
// conclusion.
func (b *summaryBuilder) addAssistantSentence(st sentence, final bool) {
	s, c := st.text, st.class
	if leadIn(s) {
		return
	}
	lower := strings.ToLower(s)
	for _, cue := range taskCues {
		if strings.Contains(lower, cue) {
			b.add(secTasks, s)
			return
		}
	}
	switch {
	case c == facts.Decision:
		b.add(secDecisions, s)
	case c == facts.Other && len(strings.Fields(s)) >= 5 && (final || st.specific || len(strings.Fields(s)) >= 8) && !facts.Narrates(s):
		// What an answer reports, or what the assistant found on the way
		// beside its tool calls ("It's a race between the cleanup job and
		// the upload"): its findings, worth as much as what it did.
		b.add(secDone, s)
	case c == facts.Other && (st.specific || len(strings.Fields(s)) >= 6):
		// What the assistant stated along the way ("The migration adds the
		// column as nullable first"); the lightest items, kept as the budget
		// allows.
		b.add(secNotes, s)
	}
}

// result records one tool result: its run, and a failure with the line that
// names its error; a success resolves the open failures of the same tool.
func (b *summaryBuilder) result(r agentstate.ToolResult, call agentstate.ToolCall) {
	name := r.Name
	if name == "" {
		name = call.Name
	}
	tc := b.tools[name]
	if tc == nil {
		tc = &toolCount{}
		b.tools[name] = tc
		b.toolOrder = append(b.toolOrder, name)
	}
	tc.runs++
	// The log keeps a masked output whole: the summary reads what was there.
	out := b.memo.output(r.Content)
	if !r.IsError && !out.failed {
		b.resolveCall(describeCall(call, name))
		for _, f := range b.failures {
			f.unfixed = f.unfixed || f.tool == name
		}
		// An output that went through but reports trouble (a crash-looping
		// pod, a failing test in a passing run): its first such line; in
		// the running task, what identifies it, kept as a failure still
		// open: the agent is at that task, and that is what broke.
		if len(out.problems) > 0 && b.running[r.ToolCallID] {
			tc.failed++
			b.addFailure(name, r.ToolCallID, fmt.Sprintf("%s [call %s]: %s", describeCall(call, name), r.ToolCallID, strings.Join(out.problems, "\n")), false)
		} else if out.observed != "" {
			b.add(secSeen, fmt.Sprintf("%s: %s", describeCall(call, name), out.observed))
		}
		return
	}
	// Failed, by its flag or in its own words (an exit status, a failing
	// test): what identifies the failure, one finding a line.
	tc.failed++
	lines := out.errors
	if len(lines) == 0 {
		lines = []string{"(no output)"}
	}
	b.addFailure(name, r.ToolCallID, fmt.Sprintf("%s [call %s]: %s", describeCall(call, name), r.ToolCallID, strings.Join(lines, "\n")), false)
}

// resolveCall marks the open failures of a call (failureKey) resolved.
func (b *summaryBuilder) resolveCall(key string) {
	if b.succeeded == nil {
		b.succeeded = map[string]bool{}
	}
	b.succeeded[key] = true
	for _, f := range b.failures {
		if f.key == key {
			f.resolved = true
		}
	}
}

// resolveEarlier adds, resolved, the failures an earlier summary lists as
// open when the span holds a later success of the same tool.
func (b *summaryBuilder) resolveEarlier(earlier []string) {
	for _, text := range earlier {
		items, _, ok := parseSummary(text)
		if !ok {
			continue
		}
		for _, title := range orderedTitles(items) {
			if !strings.HasPrefix(title, secOpenErrors) {
				continue
			}
			for _, it := range items[title] {
				if b.succeeded[failureKey(it)] {
					b.addFailure(errorTool(it), callID(it), it, true)
				}
			}
		}
	}
}

// dropKnown removes items that summaries staying before this one already hold.
func (b *summaryBuilder) dropKnown(earlier []string) {
	for _, text := range earlier {
		items, _, ok := parseSummary(text)
		if !ok {
			continue
		}
		for title, its := range items {
			if title == secTools || strings.HasPrefix(title, "Errors") {
				continue
			}
			for _, it := range its {
				if b.seen[title][it] {
					b.remove(title, it)
				}
			}
		}
	}
}

func (b *summaryBuilder) remove(section, item string) {
	items := b.items[section]
	for i, it := range items {
		if it == item {
			b.items[section] = append(items[:i:i], items[i+1:]...)
			return
		}
	}
}

func (b *summaryBuilder) mergeTools(item string) {
	for _, part := range strings.Split(item, ", ") {
		var name string
		var runs, failed int
		if n, _ := fmt.Sscanf(part, "%s x%d (%d failed)", &name, &runs, &failed); n >= 2 {
			tc := b.tools[name]
			if tc == nil {
				tc = &toolCount{}
				b.tools[name] = tc
				b.toolOrder = append(b.toolOrder, name)
			}
			tc.runs += runs
			tc.failed += failed
		}
	}
}

func (b *summaryBuilder) toolsItem() string {
	parts := make([]string, 0, len(b.toolOrder))
	for _, name := range b.toolOrder {
		tc := b.tools[name]
		if tc.failed > 0 {
			parts = append(parts, fmt.Sprintf("%s x%d (%d failed)", name, tc.runs, tc.failed))
		} else {
			parts = append(parts, fmt.Sprintf("%s x%d", name, tc.runs))
		}
	}
	return strings.Join(parts, ", ")
}

func (b *summaryBuilder) count(s string) int {
	if b.counter == nil {
		return (len(s) + 3) / 4
	}
	return b.counter.CountText(s)
}

// render writes the summary, opening with label (SummaryRequest.Label),
// within budgetTokens: sections in order of importance, each item whole or
// not at all, and a closing line saying what was left out. Failures still
// open are always written.
func (b *summaryBuilder) render(label string, budgetTokens int) string {
	if t := b.toolsItem(); t != "" {
		b.items[secTools] = []string{t}
	}
	header := label + ", written by ctxc without a model.\n"
	// Room for the header and for the note on what was left out.
	room := budgetTokens - b.count(header) - b.count("[... 999 items (about 99,999 tokens) left out to fit the summary budget: 999 user requests, 999 notes]\n")
	// The user's rules and what was agreed keep their floor share of the
	// room beside the failures still open, which are never left out: what
	// the failures take past the rest, once compressFailures shortened them
	// (it fits them beside every fact where it can), does not come out of it
	// (floor is what is left of it).
	floor := min(max(room, 0)/floorShare, b.floorTokens())
	b.compressFailures(room)
	// avail is the room an item of a section may take.
	avail := func(section string) int {
		if floorSection(section) {
			return max(room, floor)
		}
		return room
	}
	// take charges cost to the room, and a floor section's to its floor.
	take := func(section string, cost int) {
		room -= cost
		// Not max(floor-cost, 0): with it, go1.26.8's optimized build of
		// this closure under -trimpath wrote another summary than the same
		// code built without -trimpath, -N or -l (TestGolden's
		// summarize_merge), though the two forms mean the same.
		if floorSection(section) {
			floor -= cost
			if floor < 0 {
				floor = 0
			}
		}
	}
	type candidate struct {
		section string
		index   int
		text    string
		weight  int
	}
	var cands []candidate
	for _, title := range sectionOrder {
		for k, it := range b.items[title] {
			weight := sectionWeight[title] + b.memo.weight(it, sectionClass(title))
			switch {
			case title == secOpenErrors:
				weight = 1 << 20 // never left out (invariant 5)
			case isShortened(title, it):
				// Shortened by an earlier render: whole items of a merge
				// come first, so shortening never costs a whole fact.
				weight = shortenedWeight
			}
			cands = append(cands, candidate{title, k, it, weight})
		}
	}
	// Heaviest first; among equals, sections in order and items as they came.
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].weight > cands[j].weight })
	// pending is what the floor items not placed whole take in their
	// shortest form: one is kept whole out of the floor only if the others
	// still fit in it shortened, so that a short floor keeps each of them
	// identified rather than a few whole.
	pending := 0
	shortest := func(c candidate) int {
		if short := identifyingForm(c.section, c.text); short != "" {
			return b.count("- " + short + "\n")
		}
		return b.count("- " + strings.ReplaceAll(c.text, "\n", "\n  ") + "\n")
	}
	for _, c := range cands {
		if floorSection(c.section) {
			pending += shortest(c)
		}
	}
	for _, title := range sectionOrder {
		if floorSection(title) && len(b.items[title]) > 0 {
			pending += b.count("\n## " + title + "\n")
		}
	}
	if pending > 0 {
		pending += b.count(shortenedNote(999))
	}
	keep := map[string]map[int]bool{}
	opened := map[string]bool{}
	omitted := map[string]int{}
	for title, n := range b.priorOmitted {
		omitted[title] += n
	}
	omittedTokens := b.priorOmittedTokens
	// leftOut is an item left out whole, heaviest first.
	type leftOut struct {
		section string
		index   int
		text    string
		cost    int
	}
	var left []leftOut
	// shorten gives the facts left out whole the room still free, heaviest
	// first, shortened to what identifies them: a step between an item
	// whole and an item gone. It runs once every fact had its chance whole
	// and before the lighter items get theirs, so that a shrinking budget
	// loses the least valuable items first, then words, then facts.
	shortened, shortenDone := 0, false
	shorten := func() {
		shortenDone = true
		for _, l := range left {
			short := identifyingForm(l.section, l.text)
			whole := short == ""
			if whole && !floorSection(l.section) {
				continue
			}
			// A floor item with no shorter form had its whole cost
			// reserved (pending): it gets that room here.
			cost := l.cost
			if !whole {
				cost = b.count("- " + short + "\n")
				if !opened[l.section] {
					cost += b.count("\n## " + l.section + "\n")
				}
				if shortened == 0 {
					cost += b.count(shortenedNote(999))
				}
			}
			if cost > avail(l.section) {
				continue
			}
			take(l.section, cost)
			if whole {
				short = l.text
			} else {
				shortened++
			}
			opened[l.section] = true
			if keep[l.section] == nil {
				keep[l.section] = map[int]bool{}
			}
			keep[l.section][l.index] = true
			b.items[l.section][l.index] = short
			omitted[l.section]--
			if omitted[l.section] == 0 {
				delete(omitted, l.section)
			}
			omittedTokens -= l.cost
		}
	}
	for _, c := range cands {
		if !shortenDone && c.weight < factWeight {
			shorten()
		}
		cost := b.count("- " + strings.ReplaceAll(c.text, "\n", "\n  ") + "\n")
		if !opened[c.section] {
			cost += b.count("\n## " + c.section + "\n")
		}
		if cost > room && (c.section == secResolved || c.section == secUnfixed) {
			// A group too large for what is left keeps the failures that fit.
			mark := resolvedMark
			if c.section == secUnfixed {
				mark = ""
			}
			if part, cut := b.trimGroup(c.text, mark, room); cut > 0 {
				omitted[c.section] += cut
				omittedTokens += cost - b.count("- "+part+"\n")
				c.text, cost = part, b.count("- "+part+"\n")
				if !opened[c.section] {
					cost += b.count("\n## " + c.section + "\n")
				}
				b.items[c.section][c.index] = part
			}
		}
		fits := cost <= room
		if floorSection(c.section) {
			// One left out keeps its shortest form reserved for shorten.
			rest := pending - shortest(c)
			if fits = fits || cost+rest <= floor; fits {
				pending = rest
			}
		}
		if !fits && c.section != secOpenErrors {
			omitted[c.section]++
			omittedTokens += cost
			b.droppedWeight = max(b.droppedWeight, c.weight)
			if c.weight >= factWeight {
				left = append(left, leftOut{c.section, c.index, c.text, cost})
			}
			continue
		}
		take(c.section, cost)
		opened[c.section] = true
		if keep[c.section] == nil {
			keep[c.section] = map[int]bool{}
		}
		keep[c.section][c.index] = true
	}
	if !shortenDone {
		shorten()
	}
	kept := map[string][]string{}
	for _, title := range sectionOrder {
		for k, it := range b.items[title] {
			if keep[title][k] {
				kept[title] = append(kept[title], it)
			}
		}
	}
	var sb strings.Builder
	sb.WriteString(header)
	for _, title := range sectionOrder {
		section(&sb, title, kept[title])
	}
	if len(omitted) > 0 {
		var what []string
		n := 0
		for _, title := range sectionOrder {
			if k := omitted[title]; k > 0 {
				n += k
				what = append(what, fmt.Sprintf("%d %s", k, strings.ToLower(title)))
			}
		}
		noun := "items"
		if n == 1 {
			noun = "item"
		}
		fmt.Fprintf(&sb, "\n[... %d %s (about %s tokens) left out to fit the summary budget: %s]\n", n, noun, formatCount(omittedTokens), strings.Join(what, ", "))
	}
	if shortened > 0 {
		if len(omitted) == 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(shortenedNote(shortened))
	}
	return sb.String()
}

// floorShare: the user's constraints and the decisions keep at least a
// 1/floorShare share of a summary's room (what they need whole, if less)
// beside the failures still open, whole or shortened to what identifies
// them, so that a span of many open failures does not crowd out every rule
// the user gave. When the open failures alone, at their shortest, outgrow
// the room, the summary outgrows its budget by that floor too.
const floorShare = 4

// floorSection says whether a section's items share the floor (floorShare).
func floorSection(section string) bool {
	return section == secConstraints || section == secDecisions
}

// floorTokens is what the items of the floor sections cost written whole,
// with their headers.
func (b *summaryBuilder) floorTokens() int {
	n := 0
	for _, title := range sectionOrder {
		if !floorSection(title) || len(b.items[title]) == 0 {
			continue
		}
		n += b.count("\n## " + title + "\n")
		for _, it := range b.items[title] {
			n += b.count("- " + strings.ReplaceAll(it, "\n", "\n  ") + "\n")
		}
	}
	return n
}

// shortenedNote is the line a summary ends with when it shortened items
// to what identifies them.
func shortenedNote(n int) string {
	noun := "items"
	if n == 1 {
		noun = "item"
	}
	return fmt.Sprintf("[... %d %s shortened to fit the summary budget]\n", n, noun)
}

// Shortening keeps an item's first clause up to shortWords words, and the
// identifiers of the rest, up to shortIdentifiers of them; shortenedMark
// ends the clause, and a shortened item merged into a later summary weighs
// shortenedWeight, less than any whole item but the files and the tools.
const (
	shortWords       = 12
	shortIdentifiers = 3
	shortenedMark    = " …"
	shortenedWeight  = 20
)

// shortens says whether identifyingForm shortens the items of a section.
func shortens(section string) bool {
	switch section {
	case secOpenErrors, secUnfixed, secResolved, secTools, secFiles:
		return false
	}
	return true
}

// shortenedForm matches an item identifyingForm wrote.
var shortenedForm = regexp.MustCompile(` …(?: \([^()]*\))?$`)

// isShortened says whether an item of a section is one identifyingForm
// wrote (its clause ends in the mark, its identifiers follow).
func isShortened(section, item string) bool {
	return shortens(section) && strings.Contains(item, shortenedMark) && !strings.Contains(item, "\n") && shortenedForm.MatchString(item)
}

// identifierPattern finds what names a thing in an item: a file with its
// line, a code such as E-3970-004 or HTTP 503, an upper-case constant, a
// version, a quantity with its unit, a path or an address.
var identifierPattern = regexp.MustCompile(`[\w./-]+\.\w+:\d+|\b[A-Z][A-Z0-9]*-\d[\w-]*|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\bv?\d+\.\d+(?:\.\d+)?\b|\b\d+(?:\.\d+)?\s?(?:%|percent|ms|s|MiB|MB|GiB|GB|KiB|KB|tokens)\b|(?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)+|\b[\w.-]+:\d{2,5}\b`)

// identifyingForm is an item shortened to what identifies it: its first
// line's first clause, at most shortWords words, then the identifiers the
// rest of it names (a constraint's key phrase and its numbers, a decision's
// object, a note's file and line). Failures have their own shortening
// (compressFailures) and the tool tally is one line; those and an item
// already short give "".
func identifyingForm(section, item string) string {
	if !shortens(section) || isShortened(section, item) {
		return ""
	}
	first, _, _ := strings.Cut(item, "\n")
	words := strings.Fields(first)
	if len(words) <= shortWords && first == item {
		return ""
	}
	head := first
	if i := strings.IndexAny(head, ",;:("); i > 0 && len(strings.Fields(head[:i])) >= 3 {
		head = head[:i]
	}
	if w := strings.Fields(head); len(w) > shortWords {
		head = strings.Join(w[:shortWords], " ")
	}
	head = strings.TrimRight(head, " .,;:-")
	rest := strings.TrimPrefix(item, head)
	var ids []string
	for _, id := range identifierPattern.FindAllString(rest, -1) {
		if len(ids) == shortIdentifiers {
			break
		}
		if !strings.Contains(head, id) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	short := head + shortenedMark
	if len(ids) > 0 {
		short += " (" + strings.Join(ids, ", ") + ")"
	}
	if utf8.RuneCountInString(short) >= utf8.RuneCountInString(item) {
		return ""
	}
	return short
}

// trimGroup cuts a resolved item of several lines (a group: "tool: a\nb\nc
// (resolved later)") to the lines that fit in room tokens, saying how many were cut; cut is 0
// when not even one fits or the item has one line.
func (b *summaryBuilder) trimGroup(item, mark string, room int) (part string, cut int) {
	body, ok := strings.CutSuffix(item, mark)
	if !ok || !strings.Contains(body, groupSep) {
		return "", 0
	}
	prefix := ""
	if tool, rest, ok := strings.Cut(body, ": "); ok && !strings.ContainsAny(tool, " ([") {
		prefix, body = tool+": ", rest
	}
	members := strings.Split(body, groupSep)
	room -= b.count("- \n## Errors resolved\n") + b.count(prefix+mark) + b.count(fmt.Sprintf("%s… and %d more", groupSep, len(members)))
	n, used := 0, 0
	for n < len(members)-1 {
		c := b.count(members[n] + groupSep)
		if used+c > room {
			break
		}
		used += c
		n++
	}
	if n == 0 {
		return "", 0
	}
	cut = len(members) - n
	return fmt.Sprintf("%s%s%s… and %d more%s", prefix, strings.Join(members[:n], groupSep), groupSep, cut, mark), cut
}

// compressFailures compresses facts before any is left out, as little as
// makes them fit in room: when they outgrow it, the oldest resolved failures
// keep only each finding's first line, as many as needed, then the oldest
// open ones, then the resolved failures of a tool share one item. Only the
// failures so shortened lose lines, not all at once.
func (b *summaryBuilder) compressFailures(room int) {
	var settled, open int
	for _, f := range b.failures {
		if b.settled(f) {
			settled++
		} else {
			open++
		}
	}
	fits := func(shortSettled, shortOpen int, grouped bool) bool {
		b.failureItems(shortSettled, shortOpen, grouped)
		return b.factTokens() <= room
	}
	// least is the fewest failures to shorten for the facts to fit, or -1.
	least := func(n int, try func(k int) bool) int {
		if !try(n) {
			return -1
		}
		lo, hi := 0, n // try(hi) holds
		for lo < hi {
			mid := (lo + hi) / 2
			if try(mid) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return hi
	}
	if fits(0, 0, false) {
		return
	}
	// A shortened failure lost lines of a fact: a merge is given the room
	// not to, where it can be.
	b.droppedWeight = max(b.droppedWeight, factWeight)
	if k := least(settled, func(k int) bool { return fits(k, 0, false) }); k >= 0 {
		b.failureItems(k, 0, false)
		return
	}
	if k := least(open, func(k int) bool { return fits(settled, k, false) }); k >= 0 {
		b.failureItems(settled, k, false)
		return
	}
	b.failureItems(settled, open, true)
}

// failureItems lists the failures in their sections: open ones by call,
// resolved ones once per text (without its call id nothing tells two alike
// apart), the oldest shortResolved resolved ones and shortOpen open ones in
// their shortest form, and the resolved ones grouped by tool when asked.
func (b *summaryBuilder) failureItems(shortResolved, shortOpen int, grouped bool) {
	b.items[secOpenErrors], b.items[secUnfixed], b.items[secResolved] = nil, nil, nil
	defer func() {
		if grouped {
			b.items[secResolved] = groupByTool(b.items[secResolved], resolvedMark)
			b.items[secUnfixed] = groupByTool(b.items[secUnfixed], "")
		}
	}()
	listed := map[string]bool{}
	var all []string
	for _, f := range b.failures {
		if b.settled(f) {
			all = append(all, compactFailure(f))
		}
	}
	for _, f := range b.failures {
		if b.settled(f) {
			// Resolved, or left behind unfixed: listed once per text,
			// without the call, shortened and grouped first.
			section, mark := secResolved, resolvedMark
			if !f.resolved {
				section, mark = secUnfixed, ""
			}
			item := compactFailure(f)
			if coveredBy(item, all) {
				continue // said in full by another item (a shortened copy from a merge)
			}
			if shortResolved > 0 {
				shortResolved--
				item = shortFailure(item)
			}
			item += mark
			if !listed[section+"\x00"+item] {
				listed[section+"\x00"+item] = true
				b.items[section] = append(b.items[section], item)
			}
			continue
		}
		item := f.item
		if shortOpen > 0 {
			shortOpen--
			item = shortFailure(item)
		}
		b.items[secOpenErrors] = append(b.items[secOpenErrors], item)
	}
}

// settled reports whether a failure is no longer one invariant 5 keeps in
// sight: resolved, or unfixed (another call of its tool went through since)
// and not of the running task.
func (b *summaryBuilder) settled(f *failure) bool {
	return f.resolved || f.unfixed && !b.running[f.call]
}

// groupByTool merges resolved failure items of the same tool into one item,
// a few lines to an item (groupSep): a long session's fixed errors by what named
// them, without an item's framing each.
func groupByTool(items []string, mark string) []string {
	var order []string
	byTool := map[string][]string{}
	for _, it := range items {
		it = strings.TrimSuffix(it, mark)
		tool, rest, ok := strings.Cut(it, ": ")
		if !ok || strings.ContainsAny(tool, " ([") {
			tool, rest = "", it
		}
		if _, seen := byTool[tool]; !seen {
			order = append(order, tool)
		}
		for _, l := range strings.Split(rest, groupSep) {
			if strings.HasPrefix(l, "… and ") {
				continue // what an earlier trim cut is gone already
			}
			if !slices.Contains(byTool[tool], l) {
				byTool[tool] = append(byTool[tool], l) // the same error fixed twice is one
			}
		}
	}
	// A few to an item: an item is kept whole or not at all.
	const perItem = 6
	out := make([]string, 0, len(order))
	for _, tool := range order {
		fs := byTool[tool]
		for len(fs) > 0 {
			n := min(perItem, len(fs))
			item := strings.Join(fs[:n], groupSep)
			if tool != "" {
				item = tool + ": " + item
			}
			out = append(out, item+mark)
			fs = fs[n:]
		}
	}
	return out
}

// coveredBy reports whether every line of a failure item is part of another,
// longer item: the same failure, said in full elsewhere.
func coveredBy(item string, others []string) bool {
	tool, _, _ := strings.Cut(item, ":")
	for _, o := range others {
		if len(o) <= len(item) || !strings.HasPrefix(o, tool+":") {
			continue
		}
		all := true
		for _, l := range strings.Split(item, "\n") {
			if !strings.Contains(o, l) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// factTokens is what the items that hold facts cost written out: the
// sections down to errors resolved.
func (b *summaryBuilder) factTokens() int {
	n := 0
	for _, title := range sectionOrder {
		if sectionWeight[title] < factWeight && title != secOpenErrors {
			continue
		}
		for _, it := range b.items[title] {
			n += b.count("- " + strings.ReplaceAll(it, "\n", "\n  ") + "\n")
		}
	}
	return n
}

// parseSummary reads a summary written by DeterministicSummarizer: its items
// by section title and the message count of its header. ok is false for text
// in any other layout.
func parseSummary(text string) (items map[string][]string, count int, ok bool) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) == 0 {
		return nil, 0, false
	}
	if _, err := fmt.Sscanf(lines[0], summaryHeader, &count); err != nil {
		return nil, 0, false
	}
	items = map[string][]string{}
	title := ""
	for _, line := range lines[1:] {
		switch {
		case strings.HasPrefix(line, "## "):
			title = strings.TrimPrefix(line, "## ")
		case strings.HasPrefix(line, "- ") && title != "":
			items[title] = append(items[title], strings.TrimPrefix(line, "- "))
		case strings.HasPrefix(line, "  ") && len(items[title]) > 0:
			last := len(items[title]) - 1
			items[title][last] += "\n" + strings.TrimPrefix(line, "  ")
		}
	}
	return items, count, true
}

// compactFailure is how a resolved failure is listed: its tool and what
// identifies the failure, without the call's arguments and id, which matter
// only while it is open.
func compactFailure(f *failure) string {
	item := f.item
	if f.call != "" && f.tool != "" {
		if _, rest, ok := strings.Cut(item, " [call "+f.call+"]: "); ok {
			item = f.tool + ": " + rest
		}
	}
	return item
}

// shortFailure is a failure item in its shortest form, for a summary whose
// facts outgrow its budget: each finding by its first line, repeats of a
// line already given left out.
func shortFailure(item string) string {
	lines := strings.Split(item, "\n")
	seen := map[string]bool{}
	out := lines[:0:0]
	for _, l := range lines {
		head, rest, _ := strings.Cut(l, diagnose.LineSep)
		if testVerdict(head) && rest != "" {
			// A failing test's name says which, its assertion what: both
			// are its shortest form ("--- FAIL: TestPost ¦ post_test.go:150:
			// got 1224, want 1500").
			assertion, _, _ := strings.Cut(rest, diagnose.LineSep)
			head += diagnose.LineSep + assertion
		}
		if !seen[head] {
			seen[head] = true
			out = append(out, head)
		}
	}
	return strings.Join(out, "\n")
}

// testVerdict reports whether a finding's headline is only a test runner's
// verdict on a test, whose assertion follows it.
func testVerdict(line string) bool {
	if _, finding, ok := strings.Cut(line, "]: "); ok {
		line = finding // the item names its call first
	}
	for _, p := range []string{"--- FAIL", "FAIL:", "FAIL ", "FAILED ", "✕", "×", "✗", "not ok", "Failed "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// errorTool is the tool name an error item starts with ("run_tests(...) [call",
// "run_tests: ...").
func errorTool(item string) string {
	end := strings.IndexAny(item, "( [:")
	if end <= 0 {
		return ""
	}
	return item[:end]
}

func section(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n", title)
	for _, it := range items {
		b.WriteString("- ")
		b.WriteString(strings.ReplaceAll(it, "\n", "\n  "))
		b.WriteByte('\n')
	}
}

// describeCall shows a call as name(key=value) with its most telling
// argument (a path, target, URL, command or query), shortened; other
// arguments are left out.
func describeCall(c agentstate.ToolCall, name string) string {
	if c.Name != "" {
		name = c.Name
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(c.ArgumentsJSON), &args); err != nil {
		if c.ArgumentsJSON == "" {
			return name + "()"
		}
		return name + "(" + shorten(c.ArgumentsJSON, 60) + ")"
	}
	keys := []string{"path", "file_path", "file", "target", "url", "uri", "command", "cmd", "query", "pattern", "dir", "directory", "name", "id"}
	for k := range args {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys[14:])
	for _, k := range keys {
		var v string
		switch x := args[k].(type) {
		case string:
			// A multi-line value is a body (file content, a patch), not a key
			// argument: its size says enough.
			if n := strings.Count(x, "\n"); n > 0 {
				v = fmt.Sprintf("<%d lines>", n+1)
			} else {
				v = shorten(x, 48)
			}
		case float64, bool:
			v = fmt.Sprint(x)
		default:
			continue
		}
		return name + "(" + k + "=" + v + ")"
	}
	return name + "()"
}

// argValues returns the string values of the given keys in a call's
// arguments (list values too).
func argValues(argsJSON string, keys []string) []string {
	var args map[string]any
	if json.Unmarshal([]byte(argsJSON), &args) != nil {
		return nil
	}
	var out []string
	for _, k := range keys {
		switch v := args[k].(type) {
		case string:
			if v != "" && !strings.Contains(v, "\n") {
				out = append(out, v)
			}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok && s != "" && !strings.Contains(s, "\n") {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…"
}

package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// summarize is the "summarize" policy: one summary message replaces the
// oldest unprotected messages, just enough of them (in whole turns where it
// can) to bring the context to the compaction target.
//
// Summaries stack: a new summary goes right after the summaries already in
// the view and leaves them as they are, so the prompt prefix up to them stays
// byte for byte what the provider cached. Only when all summaries together
// would outgrow their budget (max_summary_ratio of the target) are they merged
// into one, which keeps their facts (an iterative summary update) and
// fills at most merge_fill_ratio of the budget, leaving room to stack again.
type summarize struct {
	cfg        SummarizeConfig
	summarizer Summarizer
	// det measures summaries and stands in when the summarizer fails.
	det DeterministicSummarizer
}

// SummaryIDPrefix starts the id of every summary this policy writes.
const SummaryIDPrefix = "ctxc-summary-"

// maxSummarizeAttempts bounds how often a span is widened when its summary
// turned out larger than estimated.
const maxSummarizeAttempts = 3

// Replayable: with the deterministic summarizer, a pure function of what it
// reads (its Memo only remembers answers); another summarizer (a model) is not.
func (s summarize) Replayable() bool {
	_, det := s.summarizer.(DeterministicSummarizer)
	return det
}

func (s summarize) Apply(ctx context.Context, w *policies.Work) error {
	goal := target(w)
	need := w.UsedTokens() - goal
	if need <= 0 {
		return nil
	}
	entries := w.Entries
	summaryTokens := 0 // the summary's size, learned after each attempt
	for attempt := 0; attempt < maxSummarizeAttempts; attempt++ {
		p, ok := s.plan(ctx, w, need, summaryTokens)
		if !ok {
			return nil
		}
		text, fallback, err := s.write(ctx, w.Counter(), &p)
		if err != nil {
			return err
		}
		if fallback != "" {
			w.Degrade(fallback)
		}
		summary := p.message(text)
		summary.ID = freeID(w.Entries, w, summary.ID)
		tokens, _ := w.Counter().CountMessage(&summary)
		w.Entries = entries
		if saved := p.removedTokens - tokens; saved >= need || attempt == maxSummarizeAttempts-1 || p.exhausted {
			if saved <= 0 {
				return nil // the runner would revert it anyway
			}
			s.replace(w, &p, summary)
			return nil
		}
		summaryTokens = tokens
	}
	return nil
}

// logBook is what planning a summary reads of the request's log and of what
// the run recorded of its messages so far (*policies.Work).
type logBook interface {
	logReader
	State() *agentstate.State
	LogIndex(id string, hint int32) (int, bool)
	Disposition(id string) (policies.MessageReport, bool)
	EntryDisposition(e *agentstate.Entry) (policies.MessageReport, bool)
}

// planView is what planning a summary reads: the view, the log and the
// records about it, and the counter.
type planView struct {
	entries []agentstate.Entry
	log     logBook
	counter agentstate.TokenCounter
}

// summaryPlan is what one summary replaces.
type summaryPlan struct {
	remove        []bool // entries the summary takes the place of
	at            int    // where it goes: the first removed entry
	span          []agentstate.Message
	merge         []string
	earlier       []string
	covers        []string
	inherited     [2]int // covers[inherited[0]:inherited[1]] are a merged summary's, written in this run
	budget        int
	removedTokens int
	failures      []agentstate.Message // unresolved failures the summary must name
	exhausted     bool                 // no more messages could be summarized
	synthesized   map[string]bool      // ids of summaries written earlier in this run that it replaces
	task          map[string]bool      // the call ids of the running task (runningCalls)
	// count, first and last are what the summary's label says it stands
	// for (SummaryRequest.Count): the covered messages, summaries aside.
	count       int
	first, last string
}

// request is the summary request of the plan within budget.
func (p *summaryPlan) request(budget int, counter agentstate.TokenCounter) SummaryRequest {
	return SummaryRequest{Span: p.span, Merge: p.merge, Earlier: p.earlier, BudgetTokens: budget, Counter: counter, Running: p.running(),
		Count: p.count, First: p.first, Last: p.last}
}

// running lists, sorted, the calls of the running task that the span or a
// merged summary holds (SummaryRequest.Running).
func (p *summaryPlan) running() []string {
	if len(p.task) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for i := range p.span {
		for _, part := range p.span[i].Parts {
			for _, id := range []string{part.ToolCall.ID, part.ToolResult.ToolCallID} {
				if id != "" && p.task[id] {
					seen[id] = true
				}
			}
		}
	}
	for _, text := range p.merge {
		for rest := text; ; {
			_, after, ok := strings.Cut(rest, "[call ")
			if !ok {
				break
			}
			id, _, _ := strings.Cut(after, "]")
			if p.task[id] {
				seen[id] = true
			}
			rest = after
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// runningCalls are the ids of the tool calls of the running task: those the
// log holds after the message that opens the view's latest turn.
func runningCalls(entries []agentstate.Entry, log logBook) map[string]bool {
	start := policies.RecentStart(entries, 1)
	if start >= len(entries) || log.State() == nil || !policies.IsTurnStart(&entries[start].Message) {
		return nil
	}
	e := &entries[start]
	pos, ok := log.LogIndex(e.Message.ID, e.LogPos)
	if !ok {
		return nil
	}
	calls := map[string]bool{}
	for _, m := range log.State().Context.Messages[pos+1:] {
		for _, part := range m.Parts {
			if part.Kind == agentstate.PartToolCall {
				calls[part.ToolCall.ID] = true
			}
		}
	}
	return calls
}

// summaryBudget is what all summaries in the view may use together: their
// share of the target, and above the target never more than four fifths of
// the window, the rest being the newest turn's. In the view a call compiles,
// never more than the window leaves beside the preamble and what is
// protected (a newest turn larger than a fifth): summaries that outgrow it
// would be dropped whole by truncate, with every fact they hold but the
// failures, where a merge within it leaves out only the lightest items.
// goal is the compaction target; room is what the window leaves beside the
// preamble and what is protected in the view a call compiles, math.MaxInt
// at points inside the log.
func (s summarize) summaryBudget(goal, hardLimit, room int) int {
	budget := int(s.cfg.MaxSummaryRatio * float64(goal))
	if hardLimit > 0 {
		budget = min(budget, max(goal, hardLimit*4/5), room)
	}
	if s.cfg.MaxSummaryTokens > 0 {
		budget = min(budget, s.cfg.MaxSummaryTokens)
	}
	return max(budget, s.cfg.MinSummaryTokens)
}

// protectedTokens is what the entries protection keeps in place use
// (protected is policies.Protection of the view), summaries aside.
func protectedTokens(entries []agentstate.Entry, protected []bool) int {
	n := 0
	for i, p := range protected {
		if p && entries[i].Message.Kind != agentstate.KindSummary {
			n += entries[i].Tokens
		}
	}
	return n
}

// plan picks the span: unprotected units from the oldest on, skipping
// protected ones before the protected tail, until the span saves need tokens
// besides its summary (estimated at its budget share, or the size learned by
// an earlier attempt), then on to the next user-turn boundary.
func (s summarize) plan(ctx context.Context, w *policies.Work, need, summaryTokens int) (summaryPlan, bool) {
	entries := w.Entries
	protected := policies.Protection(w)
	visible := policies.StaysVisible(entries)
	tail := len(entries)
	for tail > 0 && protected[tail-1] {
		tail--
	}
	isSummary := func(i int) bool {
		m := &entries[i].Message
		return m.Kind == agentstate.KindSummary && m.Role != agentstate.RoleTool
	}
	room := math.MaxInt
	if w.HardLimit() > 0 && w.AtEnd() {
		room = w.HardLimit() - w.SystemTokens - w.ToolTokens - protectedTokens(entries, protected)
	}
	total := s.summaryBudget(target(w), w.HardLimit(), room)
	existing := 0 // summaries that would stay
	var summaries []int
	for i := 0; i < tail; i++ {
		if isSummary(i) && !protected[i] {
			existing += entries[i].Tokens
			summaries = append(summaries, i)
		}
	}
	v := planView{entries: entries, log: w, counter: w.Counter()}
	p := summaryPlan{remove: make([]bool, len(entries)), at: -1, task: runningCalls(entries, w)}
	units := policies.Units(entries[:tail])
	var candidates []policies.Span
	for _, u := range units {
		if !protected[u.Start] && !(u.Len() == 1 && isSummary(u.Start)) {
			candidates = append(candidates, u)
		}
	}
	if len(candidates) == 0 {
		return p, false
	}
	estimate := func(spanTokens int) int {
		if summaryTokens > 0 {
			return summaryTokens + summaryTokens/4
		}
		return min(max(total-existing, 0), spanTokens/4)
	}
	history := policies.TaskHistory(entries, w.RecentTurns())
	if history.Contains(candidates[0].Start) {
		// Only the running task's own history is left: a summary of half of
		// it at once, not of the one step the target needs, so that the
		// next steps append to the prompt the provider cached, and the task
		// has one summary a few steps long rather than one a step.
		half := 0
		for _, u := range candidates {
			half += unitTokens(w.Entries, u)
		}
		need = max(need, half/2)
	}
	spanTokens, taken, messages := 0, 0, 0
	for taken < len(candidates) {
		u := candidates[taken]
		taken++
		spanTokens += unitTokens(w.Entries, u)
		messages += u.Len()
		if spanTokens-estimate(spanTokens) >= need && messages >= s.cfg.MinSpanMessages {
			break
		}
	}
	// End on a user-turn boundary: take the rest of the turn.
	for taken < len(candidates) && !policies.IsTurnStart(&entries[candidates[taken].Start].Message) && candidates[taken].Start == candidates[taken-1].End {
		spanTokens += unitTokens(w.Entries, candidates[taken])
		messages += candidates[taken].Len()
		taken++
	}
	if messages < s.cfg.MinSpanMessages {
		return p, false
	}
	p.exhausted = taken == len(candidates)
	for _, u := range candidates[:taken] {
		for i := u.Start; i < u.End; i++ {
			p.remove[i] = true
		}
	}
	s.collect(v, &p, visible, false)
	// Stack the new summary after the others when all fit the budget: the
	// prompt prefix up to them stays as the provider cached it. Its size is
	// the deterministic summary's, which every summarizer is budgeted against.
	stacked := s.measure(ctx, v.counter, SummaryRequest{Span: p.span, Earlier: p.earlier, BudgetTokens: math.MaxInt32, Counter: v.counter, Running: p.running(),
		Count: p.count, First: p.first, Last: p.last})
	p.budget = total - existing
	if existing+stacked > total {
		s.mergeTail(ctx, v, &p, summaries, existing, stacked, total, 1)
	} else if run := taskRun(summaries, history, p.at); run >= taskSummaryRun {
		// The running task's summaries stack, each after the last, so the
		// cached prompt reaches past them; every few of them merge into one
		// with the next steps, rather than repeat their headers a step.
		s.mergeTail(ctx, v, &p, summaries, existing, stacked, total, run)
	} else if len(summaries) > 0 && s.losesFact(ctx, v.counter, &p, min(p.budget, p.removedTokens*3/4)) {
		// A short span's summary must shrink what it replaces, and its
		// headers alone may not: merged with the newest summary it shares
		// them, rather than leave a fact out.
		s.mergeTail(ctx, v, &p, summaries, existing, stacked, total, 1)
	}
	// A summary must leave room to shrink: at most three quarters of what it replaces.
	p.budget = min(p.budget, p.removedTokens*3/4)
	return p, p.budget > 0
}

// taskSummaryRun is how many summaries of the running task's steps stack
// before they merge with the next steps into one.
const taskSummaryRun = 4

// taskRun counts the summaries of the running task's history that stack
// right before at, the first entry a new summary replaces.
func taskRun(summaries []int, history policies.Span, at int) int {
	run := 0
	for k := len(summaries) - 1; k >= 0 && history.Contains(summaries[k]) && summaries[k] == at-1-run; k-- {
		run++
	}
	return run
}

// losesFact reports whether the plan's summary, written within budget,
// leaves out a fact.
func (s summarize) losesFact(ctx context.Context, counter agentstate.TokenCounter, p *summaryPlan, budget int) bool {
	_, lost := s.det.fit(ctx, p.request(budget, counter))
	return lost >= factWeight
}

// mergeTail makes room when the summaries and the new one outgrow their
// budget, as a log-structured store compacts its newest runs: the newest
// summaries merge with the new span into one, just enough of them that the
// merged one can shed what is needed by dropping at most half of what it
// holds (its lightest items), and the older ones stay as they are, so the
// cached prompt prefix still reaches past them. All merge, into
// merge_fill_ratio of the budget, when those older ones alone take most of
// it, or when shedding within the newest ones would lose a fact (an item of
// factWeight or more): breaking the cache is then worth what it keeps.
func (s summarize) mergeTail(ctx context.Context, v planView, p *summaryPlan, summaries []int, existing, stacked, total, atLeast int) {
	entries := v.entries
	reserve := total / 10 // room for the next stacked summary
	shed := existing + stacked + reserve - total
	from, merged := len(summaries), stacked
	for from > 0 && (merged < 2*shed || from > len(summaries)-max(atLeast, 1)) {
		from--
		merged += entries[summaries[from]].Tokens
	}
	frozen := existing - (merged - stacked)
	visible := policies.StaysVisible(entries)
	if from > 0 && frozen <= total*85/100 {
		p.budget = total - frozen - reserve
		for _, i := range summaries[from:] {
			p.remove[i] = true
		}
		p.reset()
		s.collect(v, p, visible, false)
		_, lost := s.det.fit(ctx, p.request(p.budget, v.counter))
		if lost < factWeight {
			return
		}
	}
	for _, i := range summaries {
		p.remove[i] = true
	}
	p.reset()
	s.collect(v, p, visible, false)
	// Two summaries or fewer that overflow mean the last merge left too
	// little room to stack: every compaction point would merge (and uncache)
	// the whole summary again. This merge leaves room for three summaries
	// the size of the new one instead, unless that leaves a whole fact out
	// (mergeBudget).
	next := total / 10
	if len(summaries) <= 2 && stacked <= total/10 {
		next = 3 * total / 10
	}
	p.budget = s.mergeBudget(ctx, p, total, next, v.counter)
}

// mergeBudget is the budget of a summary that merges all the others: at most
// merge_fill_ratio of the budget of all summaries, and no more than its facts
// need (with a tenth of that budget to spare, and at least a third of it), so
// that the merge, which costs the cached prefix anyway, leaves room for as
// many stacked summaries as it can before the next one. What it leaves out is
// the least important: items lighter than any fact. next is the room it
// leaves for the summaries stacked after it when its facts need more than
// merge_fill_ratio; more than a tenth of the budget only while that leaves
// no whole fact out (facts shortened to their first lines aside): a fact
// costs the agent more than a merge the cache.
func (s summarize) mergeBudget(ctx context.Context, p *summaryPlan, total, next int, counter agentstate.TokenCounter) int {
	full := int(float64(total) * s.cfg.MergeFillRatio)
	lo := min(total/3, full)
	req := p.request(0, counter)
	keepsFacts := func(budget int) bool {
		req.BudgetTokens = budget
		_, lost := s.det.fit(ctx, req)
		return lost < factWeight
	}
	if keepsFacts(lo) {
		return min(lo+total/10, full)
	}
	// More facts than merge_fill_ratio holds: they may take the whole budget
	// but the room for the next summaries before any is shortened or left
	// out; the next compaction merges again sooner, which costs the cache
	// less than a fact costs the agent.
	hi := full
	if !keepsFacts(full) {
		lo, hi = full, max(full, total-next)
		if !keepsFacts(hi) {
			if next > total/10 && s.leavesOutFact(ctx, req, hi) {
				return s.mergeBudget(ctx, p, total, total/10, counter)
			}
			return hi
		}
	}
	// Bisect for the least budget that keeps every fact.
	for hi-lo > total/50+1 {
		mid := (lo + hi) / 2
		if keepsFacts(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return min(hi+total/10, max(full, hi))
}

// leavesOutFact reports whether the summary of req written within budget
// leaves out a whole item of a fact section that the summaries it merges
// had kept (what it shortens to what identifies it is not left out).
func (s summarize) leavesOutFact(ctx context.Context, req SummaryRequest, budget int) bool {
	req.BudgetTokens = budget
	text, _ := s.det.fit(ctx, req)
	omitted, _ := omittedOf(text)
	before := map[string]int{}
	for _, m := range req.Merge {
		prior, _ := omittedOf(m)
		for title, n := range prior {
			before[title] += n
		}
	}
	for title, n := range omitted {
		if sectionWeight[title] >= factWeight && n > before[title] {
			return true
		}
	}
	return false
}

// reset forgets what collect gathered, keeping the removed set.
func (p *summaryPlan) reset() {
	p.at, p.span, p.merge, p.earlier, p.covers, p.removedTokens, p.failures, p.synthesized = -1, nil, nil, nil, nil, 0, nil, nil
	p.count, p.first, p.last = 0, "", ""
}

// measure is the size of the deterministic summary of a request.
func (s summarize) measure(ctx context.Context, counter agentstate.TokenCounter, req SummaryRequest) int {
	text, _ := s.det.Summarize(ctx, req)
	if counter == nil {
		return (len(text) + 3) / 4
	}
	return counter.CountText(text) + 4
}

// collect fills the plan from its removed entries: the span's messages, the
// texts of merged and earlier summaries, the covered ids.
func (s summarize) collect(v planView, p *summaryPlan, visible []bool, whole bool) {
	entries := v.entries
	shownOutside := make(map[string]bool)
	for i := range entries {
		if !p.remove[i] && entries[i].SourceID != "" {
			shownOutside[entries[i].SourceID] = true
		}
	}
	// The summary this run wrote last holds most of what the log's merged
	// summaries cover, and its ids are unique and disposed of as summarized
	// already (replace made them so): they are taken whole, without a look
	// at any of them, which at every merge of a long log would cost every id
	// summarized so far. Should an id shown outside the span, or covered
	// anew, have been summarized already, collect starts over the exact way
	// (whole): the check costs the view and the span, not the summary.
	inherit, inherited, covered := -1, 0, 0
	for i := range entries {
		if !p.remove[i] {
			continue
		}
		m := &entries[i].Message
		covered += len(m.CoversMessageIDs)
		if !whole && entries[i].SourceID == "" && m.Kind == agentstate.KindSummary && m.Role != agentstate.RoleTool && len(m.CoversMessageIDs) > inherited {
			inherit, inherited = i, len(m.CoversMessageIDs)
		}
	}
	// Sized up front: a growing map would rehash at every compaction.
	seen := make(map[string]bool, len(entries)+covered-inherited)
	p.covers = make([]string, 0, len(entries)+covered-inherited)
	p.inherited = [2]int{}
	// cover adds id to the covered ids; true when it was not there yet.
	cover := func(id string) bool {
		if id != "" && !seen[id] && !shownOutside[id] {
			seen[id] = true
			p.covers = append(p.covers, id)
			return true
		}
		return false
	}
	// The label counts the covered messages, the summaries among them
	// aside: the new ids as they are covered, and what an inherited or
	// merged summary covers by its own label, not by its ids (read at every
	// merge, they would cost every id summarized so far).
	count := func(id string) {
		if cover(id) {
			p.count++
		}
	}
	merged := map[string]bool{} // the ids of the summaries it merges
	p.synthesized = map[string]bool{}
	// The summary reads the log's own messages: what compaction masked or
	// cut in the view is still there.
	original := map[string]*agentstate.Message{}
	for i := range entries {
		if p.remove[i] && entries[i].Changed && entries[i].SourceID != "" {
			original[entries[i].SourceID] = nil
		}
	}
	// A record isolation wrote in place of a finished execution's trace
	// (boundary) stands for the log messages it lists: the summary reads
	// those, whole, rather than the record's one-line digest of them.
	for i := range entries {
		if m := &entries[i].Message; p.remove[i] && m.Kind == agentstate.KindPlaceholder && len(m.CoversMessageIDs) > 0 {
			for _, id := range m.CoversMessageIDs {
				original[id] = nil
			}
		}
	}
	for id := range original {
		if m, ok := v.log.LogMessage(id); ok {
			original[id] = m
		}
	}
	for i := range entries {
		e := &entries[i]
		m := &e.Message
		isSum := m.Kind == agentstate.KindSummary && m.Role != agentstate.RoleTool
		if !p.remove[i] {
			if isSum && p.at < 0 {
				p.earlier = append(p.earlier, m.Text())
			}
			continue
		}
		if p.at < 0 {
			p.at = i
		}
		p.removedTokens += e.Tokens
		if isSum {
			p.merge = append(p.merge, m.Text())
			merged[m.ID], merged[e.SourceID] = true, true
			n, labelled := labelCount(m.Text())
			if labelled {
				p.count += n
			}
			if i == inherit {
				p.inherited[0] = len(p.covers)
				if len(p.covers) == 0 {
					// The new summary's ids start with the inherited ones:
					// it appends to them in place, in the capacity the
					// inherited slice has past its length, which the summary
					// it replaces never reads (a slice sees its length only).
					// Copying them would cost every id summarized so far at
					// every merge of a long log.
					p.covers = m.CoversMessageIDs
				} else {
					p.covers = append(p.covers, m.CoversMessageIDs...)
				}
				p.inherited[1] = len(p.covers)
				if !labelled {
					p.count += len(m.CoversMessageIDs)
				}
			} else {
				for _, id := range m.CoversMessageIDs {
					if cover(id) && !labelled {
						p.count++
					}
				}
			}
			if e.SourceID == "" {
				p.synthesized[m.ID] = true
			}
		} else if m.Kind == agentstate.KindPlaceholder && len(m.CoversMessageIDs) > 0 && v.log.State() != nil {
			for _, id := range m.CoversMessageIDs {
				if o := original[id]; o != nil {
					p.span = append(p.span, *o)
				}
				count(id)
			}
		} else {
			if o := original[e.SourceID]; o != nil && e.Changed && o.Kind == m.Kind && o.Role == m.Role {
				p.span = append(p.span, *o)
			} else {
				p.span = append(p.span, *m)
			}
			if visible[i] {
				p.failures = append(p.failures, *m)
			}
			if e.SourceID == "" {
				// A message normalize synthesized (a missing result): it is
				// made again on every compile, so the summary covers it too.
				count(m.ID)
			}
		}
		if isSum {
			cover(e.SourceID)
		} else {
			count(e.SourceID)
		}
	}
	if inherit >= 0 && summarizedAgain(v.log, entries, p.remove, seen) {
		p.reset()
		s.collect(v, p, visible, true)
		return
	}
	p.first, p.last = coveredEnds(v.log, p.covers, merged)
}

// coveredEnds are the first and the last of the covered ids that are not
// summaries: those it merges, and the log's (which an inherited summary's
// ids may hold).
func coveredEnds(log logReader, covers []string, merged map[string]bool) (first, last string) {
	isSummary := func(id string) bool {
		if merged[id] {
			return true
		}
		m, ok := log.LogMessage(id)
		return ok && m.Kind == agentstate.KindSummary && m.Role != agentstate.RoleTool
	}
	for _, id := range covers {
		if !isSummary(id) {
			first = id
			break
		}
	}
	for i := len(covers) - 1; i >= 0; i-- {
		if !isSummary(covers[i]) {
			last = covers[i]
			break
		}
	}
	return first, last
}

// summarizedAgain reports whether an entry shown outside the span, or an id
// the span covers anew, is recorded as summarized already: one the inherited
// summary may hold (it holds only such ids). Ids summarized by another
// summary of the span answer yes too, and send collect the exact way.
func summarizedAgain(log logBook, entries []agentstate.Entry, remove []bool, seen map[string]bool) bool {
	for i := range entries {
		if e := &entries[i]; !remove[i] && e.SourceID != "" {
			if d, ok := log.EntryDisposition(e); ok && d.Disposition == policies.DispositionSummarized {
				return true
			}
		}
	}
	for id := range seen {
		if d, ok := log.Disposition(id); ok && d.Disposition == policies.DispositionSummarized {
			return true
		}
	}
	return false
}

// write asks the summarizer for the text, falling back to the deterministic
// summary (fallback says why, for the step's report), and makes sure every
// unresolved failure it replaces is named.
func (s summarize) write(ctx context.Context, counter agentstate.TokenCounter, p *summaryPlan) (text, fallback string, err error) {
	req := p.request(p.budget, counter)
	text, err = s.summarizer.Summarize(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		fallback = fmt.Sprintf("summarizer failed (%v); used the deterministic summary", err)
		text, _ = s.det.Summarize(ctx, req)
	}
	var missing []string
	for i := range p.failures {
		if !policies.NamesFailure(text, &p.failures[i]) {
			for _, part := range p.failures[i].Parts {
				if part.Kind == agentstate.PartToolResult && part.ToolResult.IsError {
					missing = append(missing, fmt.Sprintf("- %s [call %s] failed (message %s)", part.ToolResult.Name, part.ToolResult.ToolCallID, p.failures[i].ID))
				}
			}
		}
	}
	var listed string // the summary's error items, read only when it merges
	if len(p.merge) > 0 {
		listed = strings.Join(errorLines(text, false), "\n")
	}
	for _, merged := range p.merge {
		for _, line := range errorLines(merged, true) {
			if id := callID(line); id != "" && !strings.Contains(text, "[call "+id+"]") && !listsFinding(listed, line, id) {
				missing = append(missing, line)
			}
		}
	}
	if len(missing) > 0 {
		// Invariant 5: a failure the summary replaces stays visible in it.
		text = strings.TrimRight(text, "\n") + "\n\n## Errors still open (named by ctxc)\n" + strings.Join(missing, "\n") + "\n"
	}
	return text, fallback, nil
}

// listsFinding reports whether a summary's error items (listed) give the
// finding of a merged summary's open failure (item, of call id) by its
// headline: what follows "[call id]: ", up to the finding's second line.
// The new summary lists it so among the failures resolved or not seen fixed
// when its span settled it (another command of the tool went through since);
// adding it again with its call would say it twice, outside its budget.
func listsFinding(listed, item, id string) bool {
	_, finding, ok := strings.Cut(item, "[call "+id+"]: ")
	if !ok {
		return false
	}
	finding, _, _ = strings.Cut(finding, "\n")
	finding, _, _ = strings.Cut(finding, diagnose.LineSep)
	finding = strings.TrimSpace(finding)
	return finding != "" && strings.Contains(listed, finding)
}

// message is the summary message of a plan.
func (p *summaryPlan) message(text string) agentstate.Message {
	idSource := p.covers
	if len(idSource) == 0 {
		for _, m := range p.span {
			idSource = append(idSource, m.ID)
		}
	}
	// Hashed as they are joined by newlines, without joining them: a merged
	// summary's ids are every id summarized so far.
	h := sha256.New()
	for i, id := range idSource {
		if i > 0 {
			_, _ = h.Write([]byte{'\n'})
		}
		_, _ = io.WriteString(h, id) // a hash.Hash never fails
	}
	sum := h.Sum(nil)
	// Role user: every provider accepts a user message right after the system
	// prompt, wherever the span started; Kind summary tells clients what it is.
	return agentstate.Message{
		ID:               SummaryIDPrefix + hex.EncodeToString(sum[:6]),
		Role:             agentstate.RoleUser,
		Kind:             agentstate.KindSummary,
		Parts:            []agentstate.Part{agentstate.TextPart(text)},
		CoversMessageIDs: p.covers,
	}
}

// replace puts the summary in the place of the plan's entries and records
// what happened to each covered log message.
func (s summarize) replace(w *policies.Work, p *summaryPlan, summary agentstate.Message) {
	reason := "summarized into " + summary.ID
	for i := range w.Entries {
		if p.remove[i] {
			dispose(w, &w.Entries[i], policies.DispositionSummarized, TypeSummarize, reason)
		}
	}
	// A merged summary's own covers were disposed when first summarized.
	for _, ids := range [][]string{p.covers[:p.inherited[0]], p.covers[p.inherited[1]:]} {
		for _, id := range ids {
			if _, ok := w.Disposition(id); !ok {
				w.Dispose(policies.MessageReport{MessageID: id, Disposition: policies.DispositionSummarized, Reason: reason, Policy: TypeSummarize})
			}
		}
	}
	out := make([]agentstate.Entry, 0, len(w.Entries))
	at := 0
	for i := range w.Entries {
		if i == p.at {
			at = len(out)
			out = append(out, agentstate.Entry{Message: summary})
		}
		if !p.remove[i] {
			out = append(out, w.Entries[i])
		}
	}
	w.Entries = out
	w.Touch(at)
	if len(p.synthesized) > 0 {
		kept := make([]agentstate.Message, 0, len(w.Appended))
		for _, m := range w.Appended {
			if !p.synthesized[m.ID] {
				kept = append(kept, m)
			}
		}
		w.Appended = kept
	}
	w.Appended = append(w.Appended, summary)
}

// callID is the id in an error item's "[call ID]".
func callID(item string) string {
	_, rest, ok := strings.Cut(item, "[call ")
	if !ok {
		return ""
	}
	id, _, ok := strings.Cut(rest, "]")
	if !ok {
		return ""
	}
	return id
}

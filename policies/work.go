package policies

import (
	"unsafe"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Disposition says what became of a log message in a compile.
type Disposition uint8

// Dispositions, numbered as in the proto.
const (
	DispositionUnspecified Disposition = iota
	DispositionKept
	DispositionMasked
	DispositionSummarized
	DispositionDropped
	DispositionRepaired
	DispositionTruncated
)

var dispositionNames = [...]string{"unspecified", "kept", "masked", "summarized", "dropped", "repaired", "truncated"}

func (d Disposition) String() string {
	if int(d) < len(dispositionNames) {
		return dispositionNames[d]
	}
	return "disposition?"
}

// ArtifactUsage records what the planner did with one artifact.
type ArtifactUsage struct {
	ArtifactID    string
	Source        string
	Type          string
	Strategy      string
	OriginalSize  int
	ProcessedSize int
	CacheHit      bool
}

// ModelUsage is what one helper model (planner, summarizer) consumed.
type ModelUsage struct {
	Task         string
	Model        string
	Calls        int
	InputTokens  int
	OutputTokens int
	CostUSD      float64
}

// CacheStats counts summary cache lookups.
type CacheStats struct {
	Hits, Misses, Errors int
}

// Repair records one structural fix.
type Repair struct {
	Kind      string
	MessageID string
	Detail    string
}

// Repair kinds.
const (
	RepairOrphanResultDropped      = "ORPHAN_RESULT_DROPPED"
	RepairMissingResultSynthesized = "MISSING_RESULT_SYNTHESIZED"
	RepairEmptyPartRemoved         = "EMPTY_PART_REMOVED"
	RepairEmptyMessageDropped      = "EMPTY_MESSAGE_DROPPED"
	RepairReasoningDropped         = "REASONING_DROPPED"
	RepairRoleOrderFixed           = "ROLE_ORDER_FIXED"
	RepairToolResultNameFilled     = "TOOL_RESULT_NAME_FILLED"
)

// MessageReport says what a run did with one log message.
type MessageReport struct {
	MessageID   string
	Disposition Disposition
	Tokens      int
	Provenance  agentstate.Provenance
	Reason      string
	Policy      string
}

// StageReport describes one executed step of a profile.
type StageReport struct {
	Stage            string
	Policy           string
	DurationMicros   uint64
	MessagesIn       int
	MessagesOut      int
	TokensIn         int
	TokensOut        int
	MessagesAffected int
	Degraded         bool
	DegradedReason   string
	Skipped          bool
	// Detail says what the step did beyond the counts (a verify pass's
	// additions, a target not reached).
	Detail string
	// CompactionPoint is the 1-based index in Report.Compaction.Points of the
	// compaction point the step ran at; 0 for steps outside compaction.
	CompactionPoint int
}

// CompactionReport describes the compaction schedule of one run: the levels it
// worked between and every compaction point that changed the view.
type CompactionReport struct {
	// TriggerTokens is the used-token count at which compaction starts (the
	// decide stage's trigger point, or the usable window for a profile without
	// one); 0 when the trigger is not a token count.
	TriggerTokens int
	// TargetTokens is the low-water mark compaction aims at when it runs.
	TargetTokens int
	// ReachedTokens is what the compiled context uses by ctxc's own count.
	ReachedTokens int
	// TriggerFired says whether the trigger fired on the context this call
	// compiled (before its last compaction point ran).
	TriggerFired bool
	// Forced says the Compact RPC compacted though no trigger fired.
	Forced bool
	// Points are the compaction points that changed the view, oldest first.
	Points []CompactionPoint
}

// CompactionPoint is one place in the log where compaction ran.
type CompactionPoint struct {
	// AfterMessageID is the id of the log message the point follows (the
	// user message that opens a turn, or the answer that ended an execution).
	AfterMessageID string
	// Reason says why compaction ran.
	Reason string
	// Intake says only messages that had just left the recency window were
	// edited in place, to stay under the trigger.
	Intake bool
	// TokensBefore and TokensAfter are the used tokens of the view up to the
	// point before and after compaction; TargetTokens is what it aimed at.
	TokensBefore, TokensAfter, TargetTokens int
	// Stable says the point is one later compiles of the log, grown by
	// appends, pass again and compact identically; a fit made in the middle of
	// a turn because the window was exceeded is not.
	Stable bool
}

// Report explains a run.
type Report struct {
	Profile  string
	Stages   []StageReport
	Messages []MessageReport
	Repairs  []Repair
	Warnings []string
	// FirstChangedIndex is the end of the stable prefix of the compiled
	// messages (system prompt at 0): the messages before it are shown exactly
	// as later compiles of this log, grown by appends, show them until the next
	// compaction point.
	FirstChangedIndex int
	// VerbatimPrefix is how many leading compiled messages (system prompt
	// included) are the log's own messages, unchanged: what omit_stable_prefix
	// may leave out.
	VerbatimPrefix int
	// OmittedMessageReports is how many leading log messages Messages
	// leaves out (Request.ReportFromVerbatim): those of the verbatim prefix.
	OmittedMessageReports int
	Compacted             bool
	Compaction            CompactionReport
	PlanningUsed          bool
	Artifacts             []ArtifactUsage
	ModelUsage            []ModelUsage
	Cache                 CacheStats
	TotalCostUSD          float64
}

// Input is what a run is asked to compile: the request, the resolved model
// with its counter, and the profile's recency window. No stage writes it: a
// Work gives it out only through read methods.
type Input struct {
	// State is the request's state; the run never modifies it.
	State *agentstate.State
	// Options are the request's per-call options.
	Options agentstate.Options
	// Model is the resolved target model.
	Model agentstate.ModelInfo
	// Counter measures messages for Model.
	Counter agentstate.TokenCounter
	// Attachments are the request's attached documents (artifacts for the planner).
	Attachments []agentstate.Attachment
	// RecentTurns is the profile's recency window: the latest RecentTurns turns are
	// kept verbatim and contiguous by every compaction transform.
	RecentTurns int
}

// Decision is what a decide-stage policy makes of the view it is given.
type Decision struct {
	// Compact asks for compaction: the runner compacts the view.
	Compact bool
	// Reason says why.
	Reason string
	// Target is the used-token count to compact to (the low-water mark); 0
	// leaves it to the runner.
	Target int
}

// control is what only the runner sets, through its Control, and every
// stage reads through Work's methods of the same names.
type control struct {
	hardLimit         int
	hardLimitExceeded bool
	compactionTarget  int
	scopeStart        int
	pass              CompactionPass
	atEnd             bool
}

// StepNotes are what a policy says of its own step (Degrade, Note, Touch):
// the runner takes them into the step's report after every step.
type StepNotes struct {
	// Degraded and DegradedReason say the policy fell back, and why.
	Degraded       bool
	DegradedReason string
	// Detail is what the policy wants its step's report to say.
	Detail string
	// Touches counts Touch calls: the step's messages affected.
	Touches int
}

// Work is the working set of one pipeline run. The runner creates it with
// NewWork; each policy reads and changes it in stage order. Its fields are
// what stages write: the view, the measures, the decision and the ledger.
// The input and the runner's control are read through methods, so that no
// stage can write them.
type Work struct {
	in    Input
	ctl   control
	notes StepNotes

	// Entries is the current view, oldest first; the system prompt is not in it.
	Entries []agentstate.Entry
	// SystemTokens and ToolTokens are the preamble's counts (set by the estimate stage).
	SystemTokens, ToolTokens int
	// Budget is set by the budget stage.
	Budget *agentstate.Budget
	// Decision is the decide stage's: whether to compact the view, why, and
	// towards what. The runner reads it and sets what the compaction
	// transforms aim at (CompactionTarget).
	Decision Decision
	// Appended holds messages that Compact persists into the log (summaries).
	// Like the report's repairs and warnings, it is only appended to (or
	// replaced whole), never edited in place.
	Appended []agentstate.Message
	// Masks holds masks that Compact records on log messages, by log id,
	// written only through SetMask.
	Masks map[string]agentstate.Mask
	// Rendered is the provider request body the render stage produced (JSON).
	Rendered string

	// report is the run's report as policies write it (Repair, Warn, and the
	// helper-model section: MarkPlanningUsed, AddArtifact, AddModelUsage,
	// CountCache); the runner completes the rest of it from Report.
	report Report
	// dispositions records what a policy did with a log message that is no
	// longer shown as-is (Dispose, Disposition); messages without a record
	// and still in Entries are kept. Written only through Dispose, so that
	// the runner can take a step back without copying it (Checkpoint).
	dispositions dispositionLedger
	journal      *ledgerJournal // what Dispose and SetMask overwrote since Checkpoint
	spareJournal *ledgerJournal // the last one released, for the next Checkpoint
	logIDs       map[string]int // State.Context.Messages' positions by id, built on first use
	tape         *LedgerTape    // the ledger writes since RecordLedger, when recording
	// sealed are the log's messages as the normalize stage rewrote them, by
	// id (Control.SealLog); LogMessage gives them in place of the log's.
	sealed map[string]*agentstate.Message
}

// NewWork starts the working set of a run on in, with the view of its
// whole log. The Control it returns is the runner's: the only way to set
// what stages may only read (the hard limit, the compaction pass) and to
// take a step's notes.
func NewWork(in Input) (*Work, *Control) {
	w := &Work{in: in}
	if in.State != nil {
		w.Entries = agentstate.EntriesFromLog(in.State.Context.Messages)
	}
	return w, &Control{w: w}
}

// State is the request's state. Policies must not modify what it points to.
func (w *Work) State() *agentstate.State { return w.in.State }

// Options are the request's per-call options.
func (w *Work) Options() agentstate.Options { return w.in.Options }

// Model is the resolved target model.
func (w *Work) Model() agentstate.ModelInfo { return w.in.Model }

// Counter measures messages for Model.
func (w *Work) Counter() agentstate.TokenCounter { return w.in.Counter }

// Attachments are the request's attached documents.
func (w *Work) Attachments() []agentstate.Attachment { return w.in.Attachments }

// RecentTurns is the profile's recency window: the latest RecentTurns turns
// are kept verbatim and contiguous by every compaction transform.
func (w *Work) RecentTurns() int { return w.in.RecentTurns }

// HardLimit is the most tokens the context may use: window minus reserved
// output, set by the runner from the budget.
func (w *Work) HardLimit() int { return w.ctl.hardLimit }

// HardLimitExceeded says the view does not fit HardLimit; then even the
// running execution's trace may be compacted.
func (w *Work) HardLimitExceeded() bool { return w.ctl.hardLimitExceeded }

// CompactionTarget is the used-token count the compaction transforms aim at
// in the current pass: the decision's target, a count just under the
// trigger for an intake pass, or one that fits the window when the runner
// compacts only to fit it; 0 when none is set.
func (w *Work) CompactionTarget() int { return w.ctl.compactionTarget }

// ScopeStart narrows what compaction transforms may change to the entries
// from this index on (policies.Protection marks the ones before it): set for
// an intake pass, 0 otherwise.
func (w *Work) ScopeStart() int { return w.ctl.scopeStart }

// Pass says what a compact-stage run is for.
func (w *Work) Pass() CompactionPass { return w.ctl.pass }

// AtEnd says the compaction point being compacted ends the view this call
// compiles. At points inside the log nothing needs to fit the window yet, so
// transforms must not give up what a later point can still keep (the
// truncation fallback keeps summaries there).
func (w *Work) AtEnd() bool { return w.ctl.atEnd }

// Notes are what the current step has noted so far (Degrade, Note, Touch).
func (w *Work) Notes() StepNotes { return w.notes }

// Control is the runner's hold on a Work (NewWork): it sets what stages may
// only read and takes what a step noted.
type Control struct{ w *Work }

// SetHardLimit sets HardLimit.
func (c *Control) SetHardLimit(n int) { c.w.ctl.hardLimit = n }

// SetHardLimitExceeded sets HardLimitExceeded.
func (c *Control) SetHardLimitExceeded(b bool) { c.w.ctl.hardLimitExceeded = b }

// SetCompactionTarget sets CompactionTarget.
func (c *Control) SetCompactionTarget(n int) { c.w.ctl.compactionTarget = n }

// SetPass sets what the next compact-stage run is for and, for an intake
// pass, the first entry it may change.
func (c *Control) SetPass(p CompactionPass, scopeStart int) {
	c.w.ctl.pass, c.w.ctl.scopeStart = p, scopeStart
}

// SetAtEnd sets AtEnd.
func (c *Control) SetAtEnd(b bool) { c.w.ctl.atEnd = b }

// SealLog makes the messages of the view that show a log message changed
// (a repair, a secret masked) what LogMessage gives for that message from
// now on. The runner calls it after each normalize-stage step: the log as
// that stage leaves it is the one every later stage keeps to, so what a
// later policy reads of "the log as it was" (the output an observation
// mask describes, the facts a summary quotes) never brings back what the
// normalize stage took out.
func (c *Control) SealLog() {
	w := c.w
	clear(w.sealed)
	for i := range w.Entries {
		e := &w.Entries[i]
		if !e.Changed || e.SourceID == "" || e.SourceID != e.Message.ID {
			continue
		}
		if w.sealed == nil {
			w.sealed = make(map[string]*agentstate.Message)
		}
		m := e.Message
		w.sealed[e.SourceID] = &m
	}
}

// TakeNotes returns what the step that just ran noted and clears it for the next.
func (c *Control) TakeNotes() StepNotes {
	n := c.w.notes
	c.w.notes = StepNotes{}
	return n
}

// LogMessage is the message of the state's log with id, found in constant
// time: a lookup at every compaction point must not walk the whole log.
// The log is read-only during a run; a message the normalize stage
// rewrote is given as rewritten (Control.SealLog).
func (w *Work) LogMessage(id string) (*agentstate.Message, bool) {
	if m, ok := w.sealed[id]; ok {
		return m, true
	}
	i, ok := w.logPos(id)
	if !ok {
		return nil, false
	}
	return &w.State().Context.Messages[i], true
}

// LogToolResult is the content of the tool result with callID in the log
// message with id, as the log holds it (LogMessage): what an output cut or
// masked in the view was.
func (w *Work) LogToolResult(id, callID string) (string, bool) {
	m, ok := w.LogMessage(id)
	if !ok {
		return "", false
	}
	for _, p := range m.Parts {
		if p.Kind == agentstate.PartToolResult && p.ToolResult.ToolCallID == callID {
			return p.ToolResult.Content, true
		}
	}
	return "", false
}

// logPos is the position of the message with id in State.Context.Messages.
func (w *Work) logPos(id string) (int, bool) {
	if w.State() == nil {
		return 0, false
	}
	msgs := w.State().Context.Messages
	if w.logIDs == nil {
		w.logIDs = make(map[string]int, len(msgs))
		for i := range msgs {
			if _, dup := w.logIDs[msgs[i].ID]; !dup {
				w.logIDs[msgs[i].ID] = i
			}
		}
	}
	i, ok := w.logIDs[id]
	if !ok || i >= len(msgs) || msgs[i].ID != id {
		return 0, false
	}
	return i, true
}

// CompactionPass says what a run of the compaction transforms is for.
type CompactionPass uint8

const (
	// PassEvent compacts the view towards CompactionTarget.
	PassEvent CompactionPass = iota
	// PassIntake edits in place (policies.InPlaceEdit) only the entries from
	// ScopeStart on, which have just left the recency window, towards
	// CompactionTarget (just under the trigger). Such edits cost no cached
	// prefix, so size thresholds meant to protect the cache do not apply.
	PassIntake
)

// Touch marks entry i as changed, so the runner counts it again.
func (w *Work) Touch(i int) {
	w.Entries[i].Counted = false
	w.Entries[i].Changed = true
	w.notes.Touches++
}

// SetMask records the mask Compact puts on a log message.
func (w *Work) SetMask(id string, m agentstate.Mask) {
	if w.Masks == nil {
		w.Masks = make(map[string]agentstate.Mask)
	}
	if w.journal != nil {
		old, existed := w.Masks[id]
		w.journal.masks = append(w.journal.masks, undo[agentstate.Mask]{id, old, existed})
	}
	w.Masks[id] = m
	if w.tape != nil {
		w.tape.setMask(id, m)
	}
}

// ledgerJournal is what Dispose and SetMask overwrote: taking a step back
// costs what the step wrote, not the size of a ledger that grows with the log.
type ledgerJournal struct {
	dispositions []dispositionUndo
	masks        []undo[agentstate.Mask]
}

type undo[V any] struct {
	key     string
	old     V
	existed bool
}

// A Checkpoint is a state of the ledger (dispositions, Masks, Appended,
// the report's repairs and warnings) that Rollback returns to.
type Checkpoint struct {
	tape     int // writes on the tape
	appended []agentstate.Message
	repairs  []Repair
	warnings []string
}

// Checkpoint marks the ledger as it is now; until Release, Rollback can
// return to it. Checkpoints do not nest.
func (w *Work) Checkpoint() Checkpoint {
	// The journal of the last checkpoint is reused: steps of one run write
	// about as much each, and growing a new one at every step cost as much
	// as the records it held.
	j := w.spareJournal
	if j == nil {
		j = &ledgerJournal{}
	}
	clear(j.dispositions)
	clear(j.masks)
	j.dispositions, j.masks = j.dispositions[:0], j.masks[:0]
	w.journal, w.spareJournal = j, nil
	cp := Checkpoint{appended: w.Appended, repairs: w.report.Repairs, warnings: w.report.Warnings}
	if w.tape != nil {
		cp.tape = w.tape.writes.n
	}
	return cp
}

// Rollback returns the ledger to cp, undoing every Dispose and SetMask since.
func (w *Work) Rollback(cp Checkpoint) {
	if j := w.journal; j != nil {
		for i := len(j.dispositions) - 1; i >= 0; i-- {
			w.dispositions.undo(j.dispositions[i])
		}
		undoAll(w.Masks, j.masks)
		j.dispositions, j.masks = j.dispositions[:0], j.masks[:0]
	}
	if w.tape != nil {
		w.tape.truncate(cp.tape)
	}
	// The slices are only appended to, so their old headers are their old contents.
	w.Appended, w.report.Repairs, w.report.Warnings = cp.appended, cp.repairs, cp.warnings
}

// undoAll puts back, newest first, what log says m held before.
func undoAll[V any](m map[string]V, log []undo[V]) {
	for i := len(log) - 1; i >= 0; i-- {
		if u := log[i]; u.existed {
			m[u.key] = u.old
		} else {
			delete(m, u.key)
		}
	}
}

// A LedgerTape is the ledger writes (Dispose, SetMask) of part of a run, in
// order and without those rolled back: what a run resumed from a snapshot of
// another makes again on its own ledger (ReplayLedger), so that the records
// the steps before agree on are its own.
type LedgerTape struct {
	// writes grow by whole chunks, so that recording a compile that drops
	// most of a long log never copies what it recorded (one slice, grown by
	// doubling and copied again for the cache, made a first compile of
	// 100,000 messages allocate 90 MiB more: BenchmarkFirstCompileOfLongLog).
	writes chunked[ledgerWrite]
	// masks are the SetMask writes, which are few, apart: a write of the
	// tape is a Dispose's report, or says which of them it is.
	masks []maskWrite
}

type ledgerWrite struct {
	report MessageReport
	hint   int32
	mask   int32 // 1 + index into masks for a SetMask; 0 for a Dispose
}

type maskWrite struct {
	id   string
	mask agentstate.Mask
}

func (t *LedgerTape) dispose(r MessageReport, hint int32) {
	t.writes.add(ledgerWrite{report: r, hint: hint})
}

func (t *LedgerTape) setMask(id string, m agentstate.Mask) {
	t.masks = append(t.masks, maskWrite{id, m})
	t.writes.add(ledgerWrite{mask: int32(len(t.masks))})
}

// truncate keeps the first n writes.
func (t *LedgerTape) truncate(n int) {
	// Masks are written in order: the first SetMask cut is the first of
	// the masks cut.
	for i := n; i < t.writes.n; i++ {
		if k := t.writes.at(i).mask; k > 0 {
			clear(t.masks[k-1:])
			t.masks = t.masks[:k-1]
			break
		}
	}
	t.writes.truncate(n)
}

// Len is how many writes the tape holds.
func (t *LedgerTape) Len() int { return t.writes.n }

// Bytes estimates the memory the tape holds.
func (t *LedgerTape) Bytes() int {
	n := 0
	for _, c := range t.writes.chunks {
		for i := range c {
			r := &c[i].report
			n += int(unsafe.Sizeof(c[i])) + len(r.MessageID) + len(r.Reason) + len(r.Policy)
		}
	}
	for i := range t.masks {
		m := &t.masks[i]
		n += int(unsafe.Sizeof(*m)) + len(m.id) + len(m.mask.Reason) + len(m.mask.Placeholder)
	}
	return n
}

// RecordLedger starts recording the ledger's writes on a new tape.
func (w *Work) RecordLedger() { w.tape = &LedgerTape{} }

// StopRecordingLedger ends the recording RecordLedger started and returns
// its tape, which no later write changes: the run hands it over whole
// rather than copy it.
func (w *Work) StopRecordingLedger() LedgerTape {
	if w.tape == nil {
		return LedgerTape{}
	}
	t := *w.tape
	w.tape = nil
	return t
}

// ReplayLedger makes the tape's writes again, in order, as Dispose and
// SetMask (recorded, when recording).
func (w *Work) ReplayLedger(t LedgerTape) {
	for _, c := range t.writes.chunks {
		for i := range c {
			if wr := &c[i]; wr.mask > 0 {
				m := &t.masks[wr.mask-1]
				w.SetMask(m.id, m.mask)
			} else {
				w.dispose(wr.report, wr.hint)
			}
		}
	}
}

// Release ends the recording Checkpoint started.
func (w *Work) Release() { w.spareJournal, w.journal = w.journal, nil }

// Report is the report as the policies have written it so far: the
// repairs, the warnings and the helper-model section. The runner completes
// the rest (profile, stages, messages, compaction) from it at the end.
func (w *Work) Report() Report { return w.report }

// Repair records a repair.
func (w *Work) Repair(r Repair) { w.report.Repairs = append(w.report.Repairs, r) }

// Warn records a warning for the caller.
func (w *Work) Warn(s string) { w.report.Warnings = append(w.report.Warnings, s) }

// MarkPlanningUsed records that a planner model planned this run.
func (w *Work) MarkPlanningUsed() { w.report.PlanningUsed = true }

// AddArtifact records what the planner did with one artifact.
func (w *Work) AddArtifact(a ArtifactUsage) { w.report.Artifacts = append(w.report.Artifacts, a) }

// AddModelUsage records calls of a helper model, adding them to an earlier
// record of the same task and model.
func (w *Work) AddModelUsage(u ModelUsage) {
	for i := range w.report.ModelUsage {
		if r := &w.report.ModelUsage[i]; r.Task == u.Task && r.Model == u.Model {
			r.Calls += u.Calls
			r.InputTokens += u.InputTokens
			r.OutputTokens += u.OutputTokens
			r.CostUSD += u.CostUSD
			return
		}
	}
	w.report.ModelUsage = append(w.report.ModelUsage, u)
}

// CountCache adds summary cache lookups.
func (w *Work) CountCache(c CacheStats) {
	w.report.Cache.Hits += c.Hits
	w.report.Cache.Misses += c.Misses
	w.report.Cache.Errors += c.Errors
}

// Note adds a sentence to the current step's report detail.
func (w *Work) Note(s string) {
	if w.notes.Detail != "" {
		w.notes.Detail += "; "
	}
	w.notes.Detail += s
}

// Degrade marks the current step as having fallen back.
func (w *Work) Degrade(reason string) {
	w.notes.Degraded = true
	w.notes.DegradedReason = reason
}

// MessageTokens sums the counts of the entries (counted ones only).
func (w *Work) MessageTokens() int {
	n := 0
	for i := range w.Entries {
		n += w.Entries[i].Tokens
	}
	return n
}

// UsedTokens is the preamble plus every entry.
func (w *Work) UsedTokens() int { return w.SystemTokens + w.ToolTokens + w.MessageTokens() }

package pipeline

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// ScheduleCache remembers the compaction schedule's progress (schedule.go)
// across compiles: a stateless Compile gets the whole log every time, and
// replaying its compaction points from the start cost several times what the
// rest of the compile does. A run stores where it stood after the last
// compaction point its loop passed, under a key over everything that led
// there; a later run of the same log grown by appends finds the latest of its
// own points with an entry, restores it and goes on from there, compiling
// what a full replay would, byte for byte.
//
// It is bounded by the bytes its snapshots hold (least recently used first
// out) and safe for concurrent use. A nil *ScheduleCache remembers nothing.
//
// Its keys cover the run's scope (the caller), so a run resumes only from
// its own caller's progress; they are hashed with a random seed of the
// cache's own, so that no caller can craft a log whose key is another's.
type ScheduleCache struct {
	seed     uint64
	mu       sync.Mutex
	maxBytes int
	bytes    int
	order    *list.List // of *cacheEntry, most recently used first
	byKey    map[scheduleKey]*list.Element
	stats    ScheduleCacheStats
}

// DefaultScheduleCacheBytes bounds the schedule cache ctxc serve keeps
// (schedule_cache_bytes): a snapshot holds about one compiled view, a few
// hundred KB for a 128K window, so this keeps the latest point of hundreds of
// sessions.
const DefaultScheduleCacheBytes = 64 << 20

// ScheduleCacheStats counts a cache's use.
type ScheduleCacheStats struct {
	// Hits are runs that resumed from a snapshot; Misses runs that looked for
	// one and replayed from the start.
	Hits, Misses int
	// Stores are snapshots kept; Evictions those dropped to stay in bounds.
	Stores, Evictions int
	// Entries and Bytes are what the cache holds now.
	Entries, Bytes int
}

type scheduleKey [2]uint64

type cacheEntry struct {
	key  scheduleKey
	snap *scheduleSnapshot
}

// NewScheduleCache returns a cache holding at most maxBytes of snapshots; nil
// when maxBytes is not positive (no cache).
func NewScheduleCache(maxBytes int) *ScheduleCache {
	if maxBytes <= 0 {
		return nil
	}
	return &ScheduleCache{seed: maphash.String(maphash.MakeSeed(), "pipeline.ScheduleCache"), maxBytes: maxBytes, order: list.New(), byKey: make(map[scheduleKey]*list.Element)}
}

// Stats reports the cache's counts.
func (c *ScheduleCache) Stats() ScheduleCacheStats {
	if c == nil {
		return ScheduleCacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries, s.Bytes = c.order.Len(), c.bytes
	return s
}

// latest returns the snapshot under the last of keys that has one, and its
// index; -1 when none has.
func (c *ScheduleCache) latest(keys []scheduleKey) (*scheduleSnapshot, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(keys) - 1; i >= 0; i-- {
		if el, ok := c.byKey[keys[i]]; ok {
			c.order.MoveToFront(el)
			c.stats.Hits++
			return el.Value.(*cacheEntry).snap, i
		}
	}
	c.stats.Misses++
	return nil, -1
}

// put stores a snapshot, evicting the least recently used ones past the
// bound; one larger than the whole bound is not kept.
func (c *ScheduleCache) put(key scheduleKey, s *scheduleSnapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.size > c.maxBytes {
		return
	}
	if el, ok := c.byKey[key]; ok {
		// The same key always holds the same progress: keep the one there.
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, snap: s})
	c.bytes += s.size
	c.stats.Stores++
	for c.bytes > c.maxBytes {
		el := c.order.Back()
		e := el.Value.(*cacheEntry)
		c.order.Remove(el)
		delete(c.byKey, e.key)
		c.bytes -= e.snap.size
		c.stats.Evictions++
	}
}

// scheduleSnapshot is the runner's progress after a compaction point inside
// the log: everything the loop of schedule carries to the next point, and
// what the run had recorded up to there. It shares no mutable memory with any
// run: it is copied in and copied out.
type scheduleSnapshot struct {
	view       []agentstate.Entry
	used       int
	intakeFrom int
	pos        int // entries of the full view passed
	point      int // index in the compaction points
	ledger     policies.LedgerTape
	// Tails of the run's append-only records, from the schedule's start.
	appended []agentstate.Message
	repairs  []policies.Repair
	warnings []string
	points   []policies.CompactionPoint
	stages   []policies.StageReport
	// limits are the Work's HardLimitExceeded and CompactionTarget as the
	// last compaction up to the point left them (set when compacted).
	compacted         bool
	compactedAny      bool // a compaction ran at some point, even one that changed nothing
	hardLimitExceeded bool
	compactionTarget  int
	size              int
}

// scheduleRun is what schedule keeps for the cache in one run.
type scheduleRun struct {
	cache *ScheduleCache
	keys  []scheduleKey // by compaction point
	// The run's records when the schedule started.
	appended []agentstate.Message
	repairs  []policies.Repair
	warnings []string
	stages   int
	usage    int
	cache0   policies.CacheStats
	from     int // the point restored, -1 for none
}

// cacheable says whether the schedule of this run may use the cache: every
// transform of the chain is replayable.
func (r *runner) cacheable(chain []step) bool {
	if r.c.schedules == nil || r.w.Budget == nil {
		return false
	}
	for i := range chain {
		rp, ok := chain[i].policy.(policies.Replayable)
		if !ok || !rp.Replayable() {
			return false
		}
	}
	return true
}

// scheduleKeys hashes everything a compaction point's outcome depends on: the
// run's fixed inputs, then the full view up to each point, chained: the key
// of point i covers the view's entries before points[i].
func (r *runner) scheduleKeys(full []agentstate.Entry, points []int) []scheduleKey {
	w := r.w
	hw := hasher{h: xxh3.NewSeed(r.c.schedules.seed), buf: make([]byte, 0, 4096+8)}
	hw.str(r.scope)
	hw.str(r.p.fingerprint)
	hw.num(int(r.seg))
	model := w.Model()
	m := &model
	hw.str(m.Name)
	hw.str(m.Provider)
	hw.num(m.ContextWindow)
	hw.num(m.MaxOutputTokens)
	hw.str(w.Counter().Name())
	b := w.Budget
	hw.num(b.ContextWindow)
	hw.num(b.ReservedOutput)
	hw.num(b.ReservedSystem)
	hw.num(b.SoftThreshold)
	hw.num(b.MinHeadroom)
	hw.str(b.Counter)
	hw.num(w.HardLimit())
	hw.num(w.RecentTurns())
	hw.num(w.SystemTokens)
	hw.num(w.ToolTokens)
	opts := w.Options()
	o := &opts
	hw.num(int(o.View))
	hw.optU32(o.ReservedOutputTokens)
	hw.optU32(o.MaxContextTokens)
	if o.SoftThresholdRatio != nil {
		hw.num(1)
		hw.num(int(math.Float64bits(*o.SoftThresholdRatio)))
	} else {
		hw.num(0)
	}
	hw.num(int(o.Render))
	hw.num(o.MaxReplyBytes)
	hw.bool(o.Goal != nil)
	hw.str(o.Goal.Text())
	st := w.State()
	hw.str(st.Context.SystemPrompt)
	hw.str(st.Context.ResponseFormat)
	hw.num(len(st.Context.Tools))
	for _, t := range st.Context.Tools {
		hw.str(t.Name)
		hw.str(t.Description)
		hw.str(t.ParametersJSON)
	}
	// A summary's id is the first of its candidates the log does not hold
	// (compaction's freeID), anywhere in the log: such ids beyond a point
	// change what is decided before it.
	for i := range st.Context.Messages {
		if id := st.Context.Messages[i].ID; strings.HasPrefix(id, generatedIDPrefix) {
			hw.str(id)
		}
	}
	running := ""
	if st.Execution.Running() {
		running = st.Execution.ID
	}
	keys := make([]scheduleKey, len(points))
	pos := 0
	for i, p := range points {
		for ; pos < p; pos++ {
			hw.entry(w, &full[pos], running)
		}
		keys[i] = hw.sum()
	}
	return keys
}

// generatedIDPrefix starts every id the compact stage makes up
// (compaction.SummaryIDPrefix).
const generatedIDPrefix = "ctxc-"

// hasher writes values into a hash unambiguously: every string with its
// length. Small values gather in a buffer and go to the hash in one write:
// a write per field cost as much as the hashing.
type hasher struct {
	h   *xxh3.Hasher
	buf []byte
	met map[*agentstate.Message]int // log messages hashed, by order met (logMessage)
}

// inlineBytes is the longest string copied into the buffer; longer ones are
// written to the hash directly.
const inlineBytes = 64

func (x *hasher) flush() {
	if len(x.buf) > 0 {
		_, _ = x.h.Write(x.buf)
		x.buf = x.buf[:0]
	}
}

func (x *hasher) sum() scheduleKey {
	x.flush()
	s := x.h.Sum128()
	return scheduleKey{s.Hi, s.Lo}
}

func (x *hasher) num(n int) {
	// A varint is prefix-free, so values stay apart, and most take a byte.
	x.buf = binary.AppendUvarint(x.buf, uint64(n))
	if len(x.buf) >= 4096 {
		x.flush()
	}
}

func (x *hasher) bool(b bool) {
	if b {
		x.num(1)
	} else {
		x.num(0)
	}
}

func (x *hasher) str(s string) {
	x.num(len(s))
	if len(s) <= inlineBytes {
		x.buf = append(x.buf, s...)
		return
	}
	x.flush()
	_, _ = x.h.WriteString(s)
}

// bytes hashes b as str does its string (read, never kept).
func (x *hasher) bytes(b []byte) { x.str(unsafe.String(unsafe.SliceData(b), len(b))) }

func (x *hasher) optU32(p *uint32) {
	if p == nil {
		x.num(-1)
		return
	}
	x.num(int(*p))
}

// records is what a schedule's hash reads of the request's log and of the
// ledger about it (*policies.Work).
type records interface {
	LogMessage(id string) (*agentstate.Message, bool)
	Disposition(id string) (policies.MessageReport, bool)
	EntryDisposition(e *agentstate.Entry) (policies.MessageReport, bool)
}

// entry hashes an entry of the full view with what the compaction
// transforms read about it beyond the entry itself: whether it belongs to the
// running execution, the ledger's record of its log message, the log message
// it shows when changed (masking reads the original), and the log messages
// and records a summary or placeholder covers. l is the run's (*policies.Work).
func (x *hasher) entry(l records, e *agentstate.Entry, running string) {
	x.str(e.SourceID)
	x.num(e.Tokens)
	x.num(int(e.Provenance))
	x.bool(e.Counted)
	x.bool(e.Changed)
	x.bool(e.Unsettled)
	x.num(int(e.LogPos))
	x.bool(running != "" && e.Message.ExecutionID == running)
	x.message(&e.Message)
	d, ok := l.EntryDisposition(e)
	x.record(d, ok)
	if e.Changed && e.SourceID != "" {
		m, ok := l.LogMessage(e.SourceID)
		x.bool(ok)
		if ok {
			x.logMessage(m)
		}
	}
	for _, id := range e.Message.CoversMessageIDs {
		m, ok := l.LogMessage(id)
		x.bool(ok)
		if ok {
			x.logMessage(m)
		}
		d, ok := l.Disposition(id)
		x.record(d, ok)
	}
}

// logMessage hashes a message of the state's log in full the first time
// the chain meets it, and by the order it was met after that: summaries
// merged again and again cover the same messages, and hashing them anew for
// each made the key quadratic in the log.
func (x *hasher) logMessage(m *agentstate.Message) {
	if n, ok := x.met[m]; ok {
		x.num(n)
		return
	}
	if x.met == nil {
		x.met = make(map[*agentstate.Message]int)
	}
	x.met[m] = len(x.met) + 1
	x.num(0)
	x.message(m)
}

func (x *hasher) record(d policies.MessageReport, ok bool) {
	x.bool(ok)
	if ok {
		x.str(d.MessageID)
		x.num(int(d.Disposition))
		x.num(d.Tokens)
		x.num(int(d.Provenance))
		x.str(d.Reason)
		x.str(d.Policy)
	}
}

// message hashes every field of a message (TestMessageHashCoversEveryField
// keeps it so).
func (x *hasher) message(m *agentstate.Message) {
	x.str(m.ID)
	x.num(int(m.Role))
	x.num(int(m.Kind))
	x.bool(m.Pinned)
	x.num(int(m.Importance))
	x.str(m.ExecutionID)
	x.bool(m.Usage != nil)
	if u := m.Usage; u != nil {
		x.num(int(u.InputTokens))
		x.num(int(u.CachedInputTokens))
		x.num(int(u.OutputTokens))
	}
	x.num(len(m.Metadata))
	for _, k := range slices.Sorted(maps.Keys(m.Metadata)) {
		x.str(k)
		x.str(m.Metadata[k])
	}
	x.bool(m.CreateTime != nil)
	if m.CreateTime != nil {
		x.num(int(m.CreateTime.UnixNano()))
	}
	x.num(len(m.CoversMessageIDs))
	for _, id := range m.CoversMessageIDs {
		x.str(id)
	}
	x.bool(m.Mask != nil)
	if k := m.Mask; k != nil {
		x.str(k.Reason)
		x.str(k.Placeholder)
		x.num(int(k.OriginalTokenCount))
	}
	x.num(len(m.Parts))
	for i := range m.Parts {
		x.part(&m.Parts[i])
	}
}

// part hashes a part: its kind and a mask of the fields it sets, then only
// those. A part sets two or three of its fifteen fields; writing every one
// was half of hashing a long log.
func (x *hasher) part(p *agentstate.Part) {
	strs := [...]string{p.Text, p.ToolCall.ID, p.ToolCall.Name, p.ToolCall.ArgumentsJSON, p.ToolResult.ToolCallID,
		p.ToolResult.Name, p.ToolResult.Content, p.Image.URL, p.Image.MediaType, p.Reasoning.Text}
	blobs := [...][]byte{p.Image.Data, p.Reasoning.Signature}
	var mask uint
	for j, s := range strs {
		if s != "" {
			mask |= 1 << j
		}
	}
	for j, b := range blobs {
		if len(b) > 0 {
			mask |= 1 << (len(strs) + j)
		}
	}
	if p.ToolResult.IsError {
		mask |= 1 << (len(strs) + len(blobs))
	}
	x.num(int(p.Kind))
	x.num(int(p.Image.Source))
	x.num(int(mask))
	for j, s := range strs {
		if mask&(1<<j) != 0 {
			x.str(s)
		}
	}
	for j, b := range blobs {
		if mask&(1<<(len(strs)+j)) != 0 {
			x.bytes(b)
		}
	}
}

// cloneEntries copies a view deep enough that no run writes into memory the
// copy shares: policies edit parts in place (after copying them, but a run
// and a snapshot must not rely on it) and append to a summary's covered ids
// in the capacity past their length, so every slice is copied at exactly its
// length.
func cloneEntries(entries []agentstate.Entry) []agentstate.Entry {
	out := make([]agentstate.Entry, len(entries))
	for i := range entries {
		out[i] = entries[i]
		cloneMessage(&out[i].Message)
	}
	return out
}

// cloneMessage replaces m's slices, maps and pointers by copies. The byte
// slices of images and signatures are shared: nothing writes into them.
func cloneMessage(m *agentstate.Message) {
	m.Parts = exactCopy(m.Parts)
	m.CoversMessageIDs = exactCopy(m.CoversMessageIDs)
	if m.Metadata != nil {
		m.Metadata = maps.Clone(m.Metadata)
	}
	if m.Mask != nil {
		k := *m.Mask
		m.Mask = &k
	}
	if m.Usage != nil {
		u := *m.Usage
		m.Usage = &u
	}
	if m.CreateTime != nil {
		t := *m.CreateTime
		m.CreateTime = &t
	}
}

func cloneMessages(msgs []agentstate.Message) []agentstate.Message {
	out := exactCopy(msgs)
	for i := range out {
		cloneMessage(&out[i])
	}
	return out
}

// exactCopy copies s into a slice whose capacity is its length (nil stays nil).
func exactCopy[T any](s []T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// messageBytes estimates the memory a message holds.
func messageBytes(m *agentstate.Message) int {
	n := 200 + len(m.ID) + len(m.ExecutionID)
	for i := range m.Parts {
		p := &m.Parts[i]
		n += 200 + len(p.Text) + len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.ArgumentsJSON) +
			len(p.ToolResult.ToolCallID) + len(p.ToolResult.Name) + len(p.ToolResult.Content) + len(p.Image.URL) +
			len(p.Image.MediaType) + len(p.Reasoning.Text)
	}
	for _, id := range m.CoversMessageIDs {
		n += 16 + len(id)
	}
	for k, v := range m.Metadata {
		n += 32 + len(k) + len(v)
	}
	if m.Mask != nil {
		n += 48 + len(m.Mask.Reason) + len(m.Mask.Placeholder)
	}
	return n
}

// size estimates the memory a snapshot holds, for the cache's bound.
func (s *scheduleSnapshot) measure() {
	n := 256 + s.ledger.Bytes()
	for i := range s.view {
		n += 64 + len(s.view[i].SourceID) + messageBytes(&s.view[i].Message)
	}
	for i := range s.appended {
		n += messageBytes(&s.appended[i])
	}
	for _, r := range s.repairs {
		n += 48 + len(r.Kind) + len(r.MessageID) + len(r.Detail)
	}
	for _, w := range s.warnings {
		n += 16 + len(w)
	}
	for _, p := range s.points {
		n += 80 + len(p.AfterMessageID) + len(p.Reason)
	}
	for _, st := range s.stages {
		n += 128 + len(st.Stage) + len(st.Policy) + len(st.DegradedReason) + len(st.Detail)
	}
	s.size = n
}

// tail is what cur holds past base, when cur is base appended to (or base
// is empty); ok is false when cur replaced base. The records are only
// appended to, or replaced whole (filtered), which changes what base held.
func tail[T any](cur, base []T, same func(a, b *T) bool) ([]T, bool) {
	if len(cur) < len(base) {
		return nil, false
	}
	for i := range base {
		if !same(&cur[i], &base[i]) {
			return nil, false
		}
	}
	return cur[len(base):], true
}

func sameValue[T comparable](a, b *T) bool { return *a == *b }

func sameID(a, b *agentstate.Message) bool { return a.ID == b.ID }

// beginCache starts the cache's part of a schedule: it hashes the points and
// restores the latest snapshot found. It returns the run's cache state (nil
// when the run does not use the cache) and the snapshot restored, if any.
func (r *runner) beginCache(chain []step, full []agentstate.Entry, points []int) (*scheduleRun, *scheduleSnapshot) {
	if len(points) == 0 || !r.cacheable(chain) {
		return nil, nil
	}
	w := r.w
	rep := w.Report()
	sr := &scheduleRun{cache: r.c.schedules, keys: r.scheduleKeys(full, points), appended: w.Appended, repairs: rep.Repairs,
		warnings: rep.Warnings, stages: len(r.stages), usage: len(rep.ModelUsage), cache0: rep.Cache, from: -1}
	w.RecordLedger()
	snap, i := sr.cache.latest(sr.keys)
	if snap == nil {
		return sr, nil
	}
	sr.from = i
	w.ReplayLedger(snap.ledger)
	w.Appended = append(w.Appended, cloneMessages(snap.appended)...)
	for _, rp := range snap.repairs {
		w.Repair(rp)
	}
	for _, s := range snap.warnings {
		w.Warn(s)
	}
	r.compaction.Points = append(r.compaction.Points, snap.points...)
	r.stages = append(r.stages, snap.stages...)
	if snap.compactedAny {
		r.ctl.SetHardLimitExceeded(snap.hardLimitExceeded)
		r.ctl.SetCompactionTarget(snap.compactionTarget)
	}
	r.compacted = r.compacted || snap.compacted
	return sr, snap
}

// save stores the progress after point i (the view as it stands there).
func (r *runner) save(sr *scheduleRun, i int, view []agentstate.Entry, used, intakeFrom, pos int, compactedAny bool) {
	w := r.w
	// A log no point of which compacted is replayed at the cost of its
	// verdicts: a snapshot would cost more to copy than it saves.
	if sr == nil || i <= sr.from || !compactedAny {
		return
	}
	rep := w.Report()
	if len(rep.ModelUsage) != sr.usage || rep.Cache != sr.cache0 {
		return
	}
	appended, ok1 := tail(w.Appended, sr.appended, sameID)
	repairs, ok2 := tail(rep.Repairs, sr.repairs, sameValue[policies.Repair])
	warnings, ok3 := tail(rep.Warnings, sr.warnings, sameValue[string])
	if !ok1 || !ok2 || !ok3 {
		return // a record replaced whole: not something to append again
	}
	s := &scheduleSnapshot{
		view: cloneEntries(view), used: used, intakeFrom: intakeFrom, pos: pos, point: i,
		ledger:   w.StopRecordingLedger(),
		appended: cloneMessages(appended), repairs: exactCopy(repairs), warnings: exactCopy(warnings),
		points: exactCopy(r.compaction.Points), stages: exactCopy(r.stages[sr.stages:]),
		compacted: r.compacted, compactedAny: compactedAny,
		hardLimitExceeded: w.HardLimitExceeded(), compactionTarget: w.CompactionTarget(),
	}
	s.measure()
	sr.cache.put(sr.keys[i], s)
}

// Package stateref keeps the states that calls may name by reference
// (base_state_ref) instead of sending them whole: in memory, bounded in bytes
// and in time, and in Redis when one is configured, so that any replica can
// resolve a reference another one gave. It owns the reference format, the
// way a referenced state is extended with what a call appends, and the
// entries' layout in Redis. See docs/design.md, "Calls by reference".
package stateref

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/redis/go-redis/v9"
	"github.com/zeebo/xxh3"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/bounds"
	"github.com/contextcompiler/ctxc/internal/tenant"
)

// Config is the config file's `state_refs` section.
type Config struct {
	// TTL is how long a reference resolves after it was last given or
	// used. Default 1h.
	TTL time.Duration `yaml:"ttl" json:"ttl"`
	// MaxBytes bounds the memory of the states kept for references: their
	// size on the wire and MessageOverheadBytes a message, about what their
	// decoded form holds, and what a caller keeps beside them (Remember).
	// The least recently used go first, and states never named by a call
	// go before those that were. 0 keeps no references: responses carry no
	// state_ref. Default 64 MiB.
	MaxBytes int64 `yaml:"max_bytes" json:"max_bytes"`
	// MaxBytesPerCaller bounds what one caller's states hold of MaxBytes,
	// counted as MaxBytes counts: a caller past it loses its own least
	// recently used states, never another's. 0 (the default) lets a caller
	// use all of MaxBytes while no other needs the room; whatever it is,
	// when memory is full the caller holding the most gives up its least
	// recently used first, so that one caller's flood of states evicts its
	// own and not those of a caller holding less.
	MaxBytesPerCaller int64 `yaml:"max_bytes_per_caller" json:"max_bytes_per_caller"`
	// MaxRedisEntriesPerCaller bounds the entries one caller keeps in
	// Redis: past it the caller's oldest written go (a reference whose
	// entry went misses, and the client sends the whole state), never
	// another caller's. 0 keeps no count: each entry lives its TTL.
	// Default 100,000.
	MaxRedisEntriesPerCaller int `yaml:"max_redis_entries_per_caller" json:"max_redis_entries_per_caller"`
	// KeyPrefix starts every Redis key. Default "ctxc:state:".
	KeyPrefix string `yaml:"key_prefix" json:"key_prefix"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{TTL: time.Hour, MaxBytes: 64 << 20, MaxRedisEntriesPerCaller: 100_000, KeyPrefix: "ctxc:state:"}
}

// Validate reports every problem of the config.
func (c *Config) Validate() error {
	errs := []error{
		bounds.Positive("ttl", c.TTL),
		bounds.NotNegative("max_bytes", c.MaxBytes),
		bounds.NotNegative("max_bytes_per_caller", c.MaxBytesPerCaller),
		bounds.NotNegative("max_redis_entries_per_caller", c.MaxRedisEntriesPerCaller),
	}
	if c.KeyPrefix == "" {
		errs = append(errs, errors.New("key_prefix: required"))
	}
	return errors.Join(errs...)
}

// MessageOverheadBytes is what a decoded message holds beyond its size on
// the wire (measured: 460–525 bytes on states of 14 to 2,000 messages).
const MessageOverheadBytes = 512

// Charge is what keeping st costs in memory, as MaxBytes counts it; wire is
// its size on the wire.
func Charge(st *ctxcv1.AgentState, wire int64) int64 {
	return wire + int64(len(st.GetContext().GetMessages()))*MessageOverheadBytes
}

// Redis is where a Store shares its states with other replicas.
type Redis struct {
	Client *redis.Client
	// Timeout bounds each operation: an outage costs a call at most this
	// (the reference then misses and the client sends the whole state).
	Timeout time.Duration
}

// maxPendingBytes bounds the whole states waiting to be written to Redis.
const maxPendingBytes = 64 << 20

// maxChain bounds how many appended-only entries Redis holds in a row
// before a whole state: resolving a reference on another replica reads at
// most this many entries.
const maxChain = 32

// Store is safe for concurrent use. A nil *Store keeps nothing.
type Store struct {
	cfg   Config
	redis Redis
	log   *slog.Logger

	// Memory is two segments, each least recently used first out: a
	// state sent whole waits in probation (a quarter of MaxBytes) until a
	// call names it, and then moves to the protected rest, where the
	// states of calls by reference go at once; so stateless callers, whose
	// states are never named, cannot push out the states of the callers
	// that use references. Within each, every caller's states are apart,
	// and a full segment takes from the caller holding the most.
	mu                   sync.Mutex
	probation, protected segment
	// perCaller bounds one caller's bytes in both segments together
	// (MaxBytesPerCaller, else MaxBytes).
	perCaller int64

	// wholeWrites are the whole states waiting to be written to Redis, by
	// one writer: a call does not wait for them, and when Redis is slower
	// than the calls new ones are dropped (their references then resolve on
	// this replica only).
	wholeWrites chan wholeWrite
	// pending is the bytes of the states waiting in wholeWrites, bounded by
	// maxPendingBytes.
	pending   atomic.Int64
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	hits, misses, dropped atomic.Int64
}

// segment holds each caller's states apart, least recently used first
// out, and bounds them together.
type segment struct {
	callers    map[string]*holding // by caller
	bytes, max int64
}

// holding is one caller's states in a segment.
type holding struct {
	lru   *simplelru.LRU[string, *entry] // by reference
	bytes int64
}

func newSegment(max int64) segment {
	return segment{callers: map[string]*holding{}, max: max}
}

func (g *segment) peek(caller, ref string) (*entry, bool) {
	if h := g.callers[caller]; h != nil {
		return h.lru.Peek(ref)
	}
	return nil, false
}

// get is peek, making the entry its caller's most recently used.
func (g *segment) get(caller, ref string) (*entry, bool) {
	if h := g.callers[caller]; h != nil {
		return h.lru.Get(ref)
	}
	return nil, false
}

func (g *segment) len() int {
	n := 0
	for _, h := range g.callers {
		n += h.lru.Len()
	}
	return n
}

// callerBytes is what caller's states hold in the segment.
func (g *segment) callerBytes(caller string) int64 {
	if h := g.callers[caller]; h != nil {
		return h.bytes
	}
	return 0
}

// grow counts n bytes more for an entry of caller's already held.
func (g *segment) grow(caller string, n int64) {
	g.callers[caller].bytes += n
	g.bytes += n
}

// add keeps e under caller's ref, evicting past max.
func (g *segment) add(caller, ref string, e *entry) {
	h := g.callers[caller]
	if h == nil {
		l, _ := simplelru.NewLRU[string, *entry](1<<30, nil) // bounded in bytes, not in entries
		h = &holding{lru: l}
		g.callers[caller] = h
	}
	if old, ok := h.lru.Peek(ref); ok {
		h.bytes -= old.size
		g.bytes -= old.size
	}
	h.lru.Add(ref, e)
	h.bytes += e.size
	g.bytes += e.size
	g.evictPast()
}

// evictPast evicts until the segment holds no more than its max, each time
// the least recently used state of the caller holding the most: a caller
// flooding the store gives up its own states first.
func (g *segment) evictPast() {
	for g.bytes > g.max {
		var top string
		var most int64 = -1
		for c, h := range g.callers {
			if h.bytes > most || (h.bytes == most && c < top) {
				top, most = c, h.bytes
			}
		}
		if most < 0 || !g.evictOldest(top) {
			return
		}
	}
}

// evictOldest evicts caller's least recently used state; false when the
// segment holds none of caller's.
func (g *segment) evictOldest(caller string) bool {
	h := g.callers[caller]
	if h == nil {
		return false
	}
	_, old, ok := h.lru.RemoveOldest()
	if ok {
		h.bytes -= old.size
		g.bytes -= old.size
	}
	if h.lru.Len() == 0 {
		delete(g.callers, caller)
	}
	return ok
}

func (g *segment) remove(caller, ref string) (*entry, bool) {
	h := g.callers[caller]
	if h == nil {
		return nil, false
	}
	e, ok := h.lru.Peek(ref)
	if ok {
		h.lru.Remove(ref)
		h.bytes -= e.size
		g.bytes -= e.size
		if h.lru.Len() == 0 {
			delete(g.callers, caller)
		}
	}
	return e, ok
}

type entry struct {
	state   *ctxcv1.AgentState
	decoded any
	size    int64
	depth   int // entries in Redis since the last whole state
	expires time.Time
}

type wholeWrite struct {
	caller, ref string
	state       *ctxcv1.AgentState
	size        int64
}

// New builds a store from a validated config; r.Client may be nil (memory
// only). It does not contact Redis.
func New(cfg Config, r Redis, log *slog.Logger) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	perCaller := cfg.MaxBytes
	if cfg.MaxBytesPerCaller > 0 && cfg.MaxBytesPerCaller < perCaller {
		perCaller = cfg.MaxBytesPerCaller
	}
	s := &Store{cfg: cfg, redis: r, log: log, probation: newSegment(cfg.MaxBytes / 4), protected: newSegment(cfg.MaxBytes - cfg.MaxBytes/4), perCaller: perCaller}
	if r.Client != nil {
		s.wholeWrites, s.done = make(chan wholeWrite, 64), make(chan struct{})
		s.wg.Add(1)
		go s.writeWholes()
	}
	return s, nil
}

// Close stops the Redis writer after the writes it holds.
func (s *Store) Close() {
	if s == nil || s.done == nil {
		return
	}
	s.closeOnce.Do(func() { close(s.done) })
	s.wg.Wait()
}

// Enabled says whether the store keeps references.
func (s *Store) Enabled() bool { return s != nil && s.cfg.MaxBytes > 0 }

// Stats are a store's counts since start.
type Stats struct {
	Hits, Misses, DroppedWrites int64
	Entries                     int
	Bytes                       int64
}

// Stats returns the store's counts.
func (s *Store) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Hits: s.hits.Load(), Misses: s.misses.Load(), DroppedWrites: s.dropped.Load(),
		Entries: s.probation.len() + s.protected.len(), Bytes: s.probation.bytes + s.protected.bytes}
}

// WholeRef is the reference of a state sent or returned whole: a hash of
// its encoding (wire holds the bytes of the AgentState as the request
// carried them; nil encodes st deterministically).
func WholeRef(st *ctxcv1.AgentState, wire []byte) string {
	if wire == nil {
		wire, _ = proto.MarshalOptions{Deterministic: true}.Marshal(st)
	}
	return format(xxh3.Hash128(wire))
}

// AppendedRef is the reference of the state that extends the state named
// base with overlay (the appended messages and the replaced fields): a
// chain, as a version control system names a commit by its parent and its
// change, so that it costs what was appended, not the whole log.
func AppendedRef(base string, overlay []byte) string {
	h := xxh3.New()
	h.WriteString(base)
	h.Write([]byte{0})
	h.Write(overlay)
	return format(h.Sum128())
}

func format(h xxh3.Uint128) string {
	b := h.Bytes()
	return "sr1-" + hex.EncodeToString(b[:])
}

// redisKey is where a caller's reference lives in Redis: a reference is
// bound to the caller that was given it (in memory, each caller's states
// are apart), so another caller cannot read or replace a state by guessing
// or learning its reference. The caller's namespace is a hash of fixed
// length, so no crafted name or reference reaches another caller's keys.
func (s *Store) redisKey(caller, ref string) string {
	return s.callerPrefix(caller) + ref
}

// callerPrefix starts every Redis key of caller's.
func (s *Store) callerPrefix(caller string) string {
	return s.cfg.KeyPrefix + tenant.NamespaceOf(caller) + ":"
}

// indexKey, after a caller's prefix, is the sorted set of the caller's
// entries in the order they were written (MaxRedisEntriesPerCaller); "~"
// is in no reference.
const indexKey = "~index"

// setCapped writes an entry (KEYS[1]) for the TTL (ARGV[2] ms) and records
// it last in its caller's index (KEYS[2]); then drops the caller's oldest
// entries past the cap (ARGV[4]), whose keys are the caller's prefix
// (ARGV[5]) and the reference. An entry gone with its TTL stays in the
// index until it is the oldest; the index goes with its TTL when the
// caller writes nothing for as long. One round trip, and atomic, so
// replicas writing for one caller at once keep its count. (It names keys
// it computes, so it wants one Redis, not a cluster: the store is given a
// client of one.)
var setCapped = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
local score = 1
if last[2] then score = tonumber(last[2]) + 1 end
redis.call('ZADD', KEYS[2], score, ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #old, 2 do
    redis.call('DEL', ARGV[5] .. old[i])
  end
end
return 1
`)

// set writes caller's entry for ref to Redis for the TTL, within the
// caller's cap of entries.
func (s *Store) set(ctx context.Context, caller, ref string, val []byte) error {
	if s.cfg.MaxRedisEntriesPerCaller <= 0 {
		return s.redis.Client.Set(ctx, s.redisKey(caller, ref), val, s.cfg.TTL).Err()
	}
	prefix := s.callerPrefix(caller)
	return setCapped.Run(ctx, s.redis.Client, []string{prefix + ref, prefix + indexKey},
		val, s.cfg.TTL.Milliseconds(), ref, s.cfg.MaxRedisEntriesPerCaller, prefix).Err()
}

// Overlay is what a call by reference adds to the state it names: the
// fields set in its state (replacing the referenced state's) and the
// messages appended to the log.
type Overlay struct {
	State    *ctxcv1.AgentState
	Appended []*ctxcv1.Message
}

// Encode is the overlay's encoding, which its reference and its Redis
// entry are made of: an AgentState holding the replaced fields and, as its
// log, the appended messages.
func (o Overlay) Encode() []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(o.asState())
	return b
}

func (o Overlay) asState() *ctxcv1.AgentState {
	st := o.State
	if st == nil {
		st = &ctxcv1.AgentState{}
	}
	c := st.GetContext()
	return &ctxcv1.AgentState{SchemaVersion: st.GetSchemaVersion(), AgentId: st.GetAgentId(), Model: st.GetModel(), Execution: st.GetExecution(),
		Context: &ctxcv1.AgentContext{Messages: o.Appended, SystemPrompt: c.GetSystemPrompt(), Tools: c.GetTools(),
			ResponseFormat: c.GetResponseFormat(), Metadata: c.GetMetadata()}}
}

// Extend returns base with the overlay applied: a new state sharing base's
// messages (never changing them), the overlay's messages after them, and
// each field the overlay's state sets in place of base's.
func Extend(base *ctxcv1.AgentState, o Overlay) *ctxcv1.AgentState {
	bc, oc := base.GetContext(), o.State.GetContext()
	messages := make([]*ctxcv1.Message, 0, len(bc.GetMessages())+len(o.Appended))
	messages = append(append(messages, bc.GetMessages()...), o.Appended...)
	out := &ctxcv1.AgentState{SchemaVersion: base.GetSchemaVersion(), AgentId: base.GetAgentId(), Model: base.GetModel(), Execution: base.GetExecution(),
		Context: &ctxcv1.AgentContext{Messages: messages, SystemPrompt: bc.GetSystemPrompt(), Tools: bc.GetTools(),
			ResponseFormat: bc.GetResponseFormat(), Metadata: bc.GetMetadata()}}
	if st := o.State; st != nil {
		if v := st.GetSchemaVersion(); v != 0 {
			out.SchemaVersion = v
		}
		if v := st.GetAgentId(); v != "" {
			out.AgentId = v
		}
		if v := st.GetModel(); v != nil {
			out.Model = v
		}
		if v := st.GetExecution(); v != nil {
			out.Execution = v
		}
	}
	if oc != nil {
		if v := oc.GetSystemPrompt(); v != "" {
			out.Context.SystemPrompt = v
		}
		if v := oc.GetTools(); len(v) > 0 {
			out.Context.Tools = v
		}
		if v := oc.GetResponseFormat(); v != "" {
			out.Context.ResponseFormat = v
		}
		if v := oc.GetMetadata(); len(v) > 0 {
			out.Context.Metadata = v
		}
	}
	return out
}

// Resolved is a referenced state found.
type Resolved struct {
	State *ctxcv1.AgentState
	// Size is what keeping the state costs in memory (Charge).
	Size int64
	// Decoded is what the caller kept beside the state (Remember), nil
	// when nothing was or the state was read from Redis.
	Decoded any
	depth   int
}

// Get returns the state caller was given ref for: from memory, else from
// Redis (following appended-only entries to a whole state, at most
// maxChain of them). A Redis failure is returned with ok false: the caller
// then sends the whole state, as for any miss.
func (s *Store) Get(ctx context.Context, caller, ref string) (Resolved, bool, error) {
	if !s.Enabled() {
		return Resolved{}, false, nil
	}
	if r, ok := s.memory(caller, ref); ok {
		s.hits.Add(1)
		return r, true, nil
	}
	if s.redis.Client == nil {
		s.misses.Add(1)
		return Resolved{}, false, nil
	}
	r, ok, err := s.fromRedis(ctx, caller, ref, 0)
	if ok {
		s.hits.Add(1)
	} else {
		s.misses.Add(1)
	}
	return r, ok, err
}

func (s *Store) memory(caller, ref string) (Resolved, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.protected.get(caller, ref)
	if !ok {
		// Named by a call: promoted out of probation.
		if e, ok = s.probation.remove(caller, ref); ok {
			s.protected.add(caller, ref, e)
		}
	}
	if !ok {
		return Resolved{}, false
	}
	now := time.Now()
	if now.After(e.expires) {
		s.protected.remove(caller, ref)
		return Resolved{}, false
	}
	e.expires = now.Add(s.cfg.TTL)
	return Resolved{State: e.state, Size: e.size, Decoded: e.decoded, depth: e.depth}, true
}

// Remember keeps decoded beside the state caller was given ref for, if
// memory holds it and nothing is kept beside it yet: what the caller made
// of the state (its log decoded), so that a call naming it reads it back
// instead of making it again. bytes is what keeping it costs; it counts
// against MaxBytes with the state.
func (s *Store) Remember(caller, ref string, decoded any, bytes int64) {
	if !s.Enabled() || decoded == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range []*segment{&s.protected, &s.probation} {
		e, ok := g.peek(caller, ref)
		if !ok {
			continue
		}
		if e.decoded != nil || e.size+bytes > min(g.max, s.perCaller) {
			return
		}
		e.decoded, e.size = decoded, e.size+bytes
		g.grow(caller, bytes)
		g.evictPast()
		s.fitCaller(caller)
		return
	}
}

// holds says whether memory holds ref for caller, without using it.
func (s *Store) holds(caller, ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, inProtected := s.protected.peek(caller, ref)
	_, inProbation := s.probation.peek(caller, ref)
	return inProtected || inProbation
}

// entryHeader starts every Redis entry: the format, the base reference ("-"
// for a whole state) and the chain depth, then the AgentState's bytes.
const entryHeader = "ctxc-state-ref 1\n"

func (s *Store) fromRedis(ctx context.Context, caller, ref string, hops int) (Resolved, bool, error) {
	if hops > maxChain {
		return Resolved{}, false, fmt.Errorf("state ref %s: more than %d appended entries in a row", ref, maxChain)
	}
	rctx, cancel := context.WithTimeout(ctx, s.redis.Timeout)
	raw, err := s.redis.Client.Get(rctx, s.redisKey(caller, ref)).Bytes()
	cancel()
	switch {
	case errors.Is(err, redis.Nil):
		return Resolved{}, false, nil
	case err != nil:
		return Resolved{}, false, err
	}
	base, depth, body, err := parseEntry(raw)
	if err != nil {
		return Resolved{}, false, fmt.Errorf("state ref %s: %w", ref, err)
	}
	var st ctxcv1.AgentState
	if err := proto.Unmarshal(body, &st); err != nil {
		return Resolved{}, false, fmt.Errorf("state ref %s: %w", ref, err)
	}
	r := Resolved{State: &st, Size: Charge(&st, int64(len(body))), depth: depth}
	if base != "" {
		b, ok := s.memory(caller, base)
		if !ok {
			if b, ok, err = s.fromRedis(ctx, caller, base, hops+1); !ok {
				return Resolved{}, false, err
			}
		}
		r.State = Extend(b.State, Overlay{State: &st, Appended: st.GetContext().GetMessages()})
		r.Size += b.Size
	}
	s.keep(caller, ref, r, true)
	return r, true, nil
}

func parseEntry(raw []byte) (base string, depth int, body []byte, err error) {
	rest, ok := bytes.CutPrefix(raw, []byte(entryHeader))
	if !ok {
		return "", 0, nil, errors.New("not a state ref entry of format 1")
	}
	line, rest, ok1 := bytes.Cut(rest, []byte{'\n'})
	d, rest, ok2 := bytes.Cut(rest, []byte{'\n'})
	depth, err = strconv.Atoi(string(d))
	if !ok1 || !ok2 || err != nil || depth < 0 || depth > maxChain {
		return "", 0, nil, errors.New("damaged state ref entry header")
	}
	if base = string(line); base == "-" {
		base = ""
	}
	return base, depth, rest, nil
}

// keep holds a state in memory: in probation when it was sent or returned
// whole, else (made by a call by reference, or read from Redis for one)
// protected. A state larger than its segment, or than a caller's share, is
// not kept.
func (s *Store) keep(caller, ref string, r Resolved, protect bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &s.probation
	if protect {
		g = &s.protected
	}
	if r.Size > min(g.max, s.perCaller) {
		return
	}
	if !protect {
		if _, ok := s.protected.peek(caller, ref); ok {
			return
		}
	}
	s.probation.remove(caller, ref)
	g.add(caller, ref, &entry{state: r.State, size: r.Size, depth: r.depth, expires: time.Now().Add(s.cfg.TTL)})
	s.fitCaller(caller)
}

// fitCaller evicts caller's least recently used states, probation's first,
// until caller holds no more than its share.
func (s *Store) fitCaller(caller string) {
	for s.probation.callerBytes(caller)+s.protected.callerBytes(caller) > s.perCaller {
		if !s.probation.evictOldest(caller) && !s.protected.evictOldest(caller) {
			return
		}
	}
}

// SyncWholeBytes is the largest whole state written to Redis before the
// call answers: one round trip, so that the next call, on any replica,
// finds it. Larger ones are written in the background, so that a call
// does not wait on megabytes going to Redis (a call by reference that
// comes before its write lands misses, and the client sends the state
// whole).
const SyncWholeBytes = 256 << 10

// PutWhole keeps a state sent or returned whole under ref and writes it to
// Redis: now when it is small, else in the background. size is what
// keeping it costs (Charge).
func (s *Store) PutWhole(ctx context.Context, caller, ref string, st *ctxcv1.AgentState, size int64) {
	if !s.Enabled() {
		return
	}
	if s.holds(caller, ref) {
		return // the same state again: kept, and written when it first came
	}
	s.keep(caller, ref, Resolved{State: st, Size: size}, false)
	if s.redis.Client == nil {
		return
	}
	if size <= SyncWholeBytes {
		s.writeWhole(ctx, wholeWrite{caller: caller, ref: ref, state: st})
		return
	}
	if s.pending.Add(size) > maxPendingBytes {
		s.pending.Add(-size)
		s.dropped.Add(1)
		return
	}
	select {
	case s.wholeWrites <- wholeWrite{caller: caller, ref: ref, state: st, size: size}:
	default:
		s.pending.Add(-size)
		s.dropped.Add(1)
	}
}

// PutAppended keeps the state a call by reference made (base extended by
// overlay) under ref, and writes the overlay to Redis before returning,
// so that the next call may go to any replica: it is small, the size of
// what was appended. After maxChain such entries the whole state is
// written instead (in the background), which bounds what a replica reads.
func (s *Store) PutAppended(ctx context.Context, caller, ref string, base Resolved, baseRef string, overlay []byte, st *ctxcv1.AgentState) {
	if !s.Enabled() {
		return
	}
	added := len(st.GetContext().GetMessages()) - len(base.State.GetContext().GetMessages())
	r := Resolved{State: st, Size: base.Size + int64(len(overlay)) + int64(max(added, 0))*MessageOverheadBytes, depth: base.depth + 1}
	if r.depth > maxChain {
		s.PutWhole(ctx, caller, ref, st, r.Size)
		return
	}
	if _, known := s.memory(caller, ref); known {
		return
	}
	s.keep(caller, ref, r, true)
	if s.redis.Client == nil {
		return
	}
	var b bytes.Buffer
	b.Grow(len(entryHeader) + len(baseRef) + 8 + len(overlay))
	fmt.Fprintf(&b, "%s%s\n%d\n", entryHeader, baseRef, r.depth)
	b.Write(overlay)
	rctx, cancel := context.WithTimeout(ctx, s.redis.Timeout)
	defer cancel()
	if err := s.set(rctx, caller, ref, b.Bytes()); err != nil {
		s.log.WarnContext(ctx, "state ref not shared through Redis", "error", err, "component", "state_refs")
	}
}

func (s *Store) writeWholes() {
	defer s.wg.Done()
	for {
		select {
		case w := <-s.wholeWrites:
			s.writeWhole(context.Background(), w)
			s.pending.Add(-w.size)
		case <-s.done:
			for {
				select {
				case w := <-s.wholeWrites:
					s.writeWhole(context.Background(), w)
					s.pending.Add(-w.size)
				default:
					return
				}
			}
		}
	}
}

func (s *Store) writeWhole(ctx context.Context, w wholeWrite) {
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(w.state)
	if err != nil {
		return
	}
	val := make([]byte, 0, len(entryHeader)+4+len(body))
	val = append(append(val, entryHeader...), "-\n0\n"...)
	val = append(val, body...)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.redis.Timeout)
	defer cancel()
	if err := s.set(ctx, w.caller, w.ref, val); err != nil {
		s.log.WarnContext(ctx, "state ref not shared through Redis", "error", err, "component", "state_refs")
	}
}

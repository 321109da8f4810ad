package eval

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Service is the part of ctxc.v1.ContextCompilerService a replay calls. The
// in-process server (a ctxcv1.ContextCompilerServiceServer) is one; a client
// of a running server is one through FromClient.
type Service interface {
	Compile(context.Context, *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error)
	Budget(context.Context, *ctxcv1.BudgetRequest) (*ctxcv1.BudgetResponse, error)
	Route(context.Context, *ctxcv1.RouteRequest) (*ctxcv1.RouteResponse, error)
	CountTokens(context.Context, *ctxcv1.CountTokensRequest) (*ctxcv1.CountTokensResponse, error)
	ListProfiles(context.Context, *ctxcv1.ListProfilesRequest) (*ctxcv1.ListProfilesResponse, error)
}

// FromClient adapts a gRPC client to Service; opts go with every call.
func FromClient(c ctxcv1.ContextCompilerServiceClient, opts ...grpc.CallOption) Service {
	return clientService{c: c, opts: opts}
}

type clientService struct {
	c    ctxcv1.ContextCompilerServiceClient
	opts []grpc.CallOption
}

func (s clientService) Compile(ctx context.Context, r *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error) {
	return s.c.Compile(ctx, r, s.opts...)
}

func (s clientService) Budget(ctx context.Context, r *ctxcv1.BudgetRequest) (*ctxcv1.BudgetResponse, error) {
	return s.c.Budget(ctx, r, s.opts...)
}

func (s clientService) Route(ctx context.Context, r *ctxcv1.RouteRequest) (*ctxcv1.RouteResponse, error) {
	return s.c.Route(ctx, r, s.opts...)
}

func (s clientService) CountTokens(ctx context.Context, r *ctxcv1.CountTokensRequest) (*ctxcv1.CountTokensResponse, error) {
	return s.c.CountTokens(ctx, r, s.opts...)
}

func (s clientService) ListProfiles(ctx context.Context, r *ctxcv1.ListProfilesRequest) (*ctxcv1.ListProfilesResponse, error) {
	return s.c.ListProfiles(ctx, r, s.opts...)
}

// Options choose what a replay measures.
type Options struct {
	// Profiles to measure; required.
	Profiles []string
	// Windows are CompileOptions.max_context_token_count values; required.
	Windows []uint32
	// RouteProfile routes every session with this profile instead of the
	// profile being measured (which persists its compaction at execution end
	// when it has compact_on_execution_end).
	RouteProfile string
	// EveryStep compiles after every routed agent step too, not only after
	// each user turn.
	EveryStep bool
	// Now reads the clock for Compile latencies; time.Now when nil.
	Now func() time.Time

	// mustKeep measures each compile's Compile.MustKeepTokens and, for a
	// failed compile, its usable window (Sweep sets it).
	mustKeep bool
}

// Profiles lists the names of every profile svc offers.
func Profiles(ctx context.Context, svc Service) ([]string, error) {
	resp, err := svc.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
	if err != nil {
		return nil, fmt.Errorf("ListProfiles: %w", err)
	}
	var names []string
	for _, p := range resp.GetProfiles() {
		names = append(names, p.GetName())
	}
	return names, nil
}

// Run replays every session through every profile and window and measures
// each compile (see the package doc). It fails only when a session cannot be
// replayed: a Route, Budget or CountTokens call that fails. Failed compiles
// are measured, not errors.
func Run(ctx context.Context, svc Service, sessions []*Session, opts Options) (*Result, error) {
	if len(opts.Profiles) == 0 || len(opts.Windows) == 0 {
		return nil, errors.New("eval: at least one profile and one window are required")
	}
	for _, w := range opts.Windows {
		if w == 0 {
			return nil, errors.New("eval: a window must be a positive token count")
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	res := &Result{}
	counter := newTokenCounter(svc)
	for _, s := range sessions {
		info, err := describe(ctx, counter, s)
		if err != nil {
			return nil, err
		}
		res.Sessions = append(res.Sessions, info)
	}
	for _, p := range opts.Profiles {
		for _, w := range opts.Windows {
			for _, s := range sessions {
				r := replay{svc: svc, counter: counter, opts: &opts, session: s, profile: p, window: w, facts: s.Header.Facts}
				if len(r.facts) == 0 {
					r.facts = autoFacts(s)
				}
				recs, err := r.run(ctx)
				if err != nil {
					return nil, err
				}
				res.Compiles = append(res.Compiles, recs...)
			}
			res.Rows = append(res.Rows, aggregate(p, w, sessionsOf(sessions), res.Compiles))
		}
	}
	return res, nil
}

func sessionsOf(sessions []*Session) []string {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.Header.ID
	}
	return ids
}

// SessionInfo describes one replayed session.
type SessionInfo struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Turns int    `json:"turns"`
	// Messages and LogTokens are those of every input (route lines) or of the
	// last state, counted with the session's model, system prompt included.
	Messages  int `json:"messages"`
	LogTokens int `json:"log_tokens"`
	// Facts is how many facts are measured; FactSource says whether the
	// header listed them ("listed") or they were found in the session
	// ("found": see the package doc), and FactKinds counts them by kind.
	Facts      int    `json:"facts"`
	FactSource string `json:"fact_source"`
	// FactsFile is the file the facts were listed in when it is not the
	// session itself (ctxc eval --facts).
	FactsFile string           `json:"facts_file,omitempty"`
	FactKinds map[FactKind]int `json:"fact_kinds,omitempty"`
}

// Fact sources.
const (
	SourceListed = "listed"
	SourceFound  = "found"
)

func describe(ctx context.Context, counter *tokenCounter, s *Session) (SessionInfo, error) {
	info := SessionInfo{ID: s.Header.ID, Name: s.Name, Turns: s.Turns(), FactSource: SourceListed}
	facts := s.Header.Facts
	if len(facts) == 0 {
		facts, info.FactSource = autoFacts(s), SourceFound
	}
	info.Facts = len(facts)
	info.FactsFile = s.FactsFrom
	if info.FactSource == SourceFound {
		info.FactKinds = map[FactKind]int{}
		for _, f := range facts {
			info.FactKinds[f.Kind]++
		}
	}
	model := s.Header.Model.GetName()
	prompt := s.Header.SystemPrompt
	var msgs []*ctxcv1.Message
	for i := range s.Lines {
		l := &s.Lines[i]
		switch {
		case l.State != nil:
			msgs = l.State.GetContext().GetMessages()
			prompt = l.State.GetContext().GetSystemPrompt()
			if n := l.State.GetModel().GetName(); n != "" {
				model = n
			}
		case l.Route.GetUserTurn() != nil:
			leading := true
			for _, m := range l.Route.GetUserTurn().GetMessages() {
				leading = leading && m.GetRole() == ctxcv1.Role_ROLE_SYSTEM
				if leading {
					prompt = messageText(m)
					continue
				}
				msgs = append(msgs, m)
			}
		case l.Route.GetStep() != nil:
			msgs = append(msgs, l.Route.GetStep().GetMessages()...)
		case l.Route.GetEvent() != nil:
			msgs = append(msgs, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_USER, Kind: ctxcv1.MessageKind_MESSAGE_KIND_EVENT, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: l.Route.GetEvent().GetText()}}}})
		}
	}
	info.Messages = len(msgs)
	all := msgs
	if prompt != "" {
		all = append([]*ctxcv1.Message{{Role: ctxcv1.Role_ROLE_SYSTEM, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: prompt}}}}}, msgs...)
	}
	keys := make([]contentKey, len(all))
	for i, m := range all {
		keys[i] = keyOf(m)
	}
	counts, err := counter.count(ctx, model, all, keys)
	if err != nil {
		return info, fmt.Errorf("%s: counting tokens for model %q (a model the service does not know needs an entry in model_registry of --config): %w", s.Name, model, err)
	}
	for _, n := range counts {
		info.LogTokens += n
	}
	return info, nil
}

// replay is one session through one profile and window.
type replay struct {
	svc     Service
	counter *tokenCounter
	opts    *Options
	session *Session
	profile string
	window  uint32
	facts   []Fact

	state *ctxcv1.AgentState
	turn  int
	// routed is the time the Route calls since the last compile took.
	routed time.Duration
	seen   map[string]bool // facts whose text was sent so far
	prev   *compiled       // the previous successful compile
}

// compiled is what the next compile's prefix is compared with.
type compiled struct {
	items  []contentKey
	tokens []int // of each item
	// msgTokens are the tokens of each compiled message.
	msgTokens []int
	logIDs    map[string]bool
}

func (r *replay) run(ctx context.Context) ([]Compile, error) {
	h := &r.session.Header
	r.state = &ctxcv1.AgentState{
		SchemaVersion: 1,
		AgentId:       h.ID,
		Model:         proto.Clone(h.Model).(*ctxcv1.ModelSpec),
		Context:       &ctxcv1.AgentContext{SystemPrompt: h.SystemPrompt, Tools: h.Tools},
	}
	r.seen = map[string]bool{}
	observe(r.facts, r.seen, h.SystemPrompt)
	routeProfile := r.profile
	if r.opts.RouteProfile != "" {
		routeProfile = r.opts.RouteProfile
	}
	var out []Compile
	for i := range r.session.Lines {
		l := &r.session.Lines[i]
		observe(r.facts, r.seen, inputTexts(l)...)
		if l.State != nil {
			r.state = l.State
			if r.state.GetModel() == nil {
				r.state = proto.Clone(l.State).(*ctxcv1.AgentState)
				r.state.Model = proto.Clone(h.Model).(*ctxcv1.ModelSpec)
			}
			r.turn = stateTurn(l)
			rec, err := r.compile(ctx, l.Number, false)
			if err != nil {
				return nil, err
			}
			out = append(out, rec)
			continue
		}
		req := proto.Clone(l.Route).(*ctxcv1.RouteRequest)
		req.State, req.Profile = r.state, routeProfile
		// A profile that compacts when an execution ends does so for the
		// window the runtime compiles with.
		window := r.window
		req.Options = &ctxcv1.CompileOptions{MaxContextTokenCount: &window}
		start := r.opts.Now()
		resp, err := r.svc.Route(ctx, req)
		r.routed += r.opts.Now().Sub(start)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: Route with profile %s: %w", r.session.Name, l.Number, routeProfile, err)
		}
		r.state = resp.GetState()
		isTurn := l.Route.GetUserTurn() != nil
		if isTurn {
			r.turn++
		}
		if isTurn || (r.opts.EveryStep && l.Route.GetStep() != nil) {
			rec, err := r.compile(ctx, l.Number, !isTurn)
			if err != nil {
				return nil, err
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

// Compile is the measurement of one compile.
type Compile struct {
	Session string `json:"session"`
	Profile string `json:"profile"`
	Window  uint32 `json:"window"`
	// Line is the session file line after which it ran, Turn the user turn,
	// AfterStep whether it followed an agent step (--every-step) rather than
	// a user turn or a state.
	Line      int  `json:"line"`
	Turn      int  `json:"turn"`
	AfterStep bool `json:"after_step,omitempty"`
	// Code is the gRPC code of a failed compile ("" when it succeeded).
	Code          string `json:"code,omitempty"`
	Error         string `json:"error,omitempty"`
	LatencyMicros int64  `json:"latency_micros"`
	// RouteMicros is what the Route calls that led to this compile from the
	// previous one took: with LatencyMicros, a turn's cost to a runtime
	// that routes (Route records compaction there, a stateless compile
	// replays it).
	RouteMicros int64 `json:"route_micros"`
	// MustKeepTokens, measured by a sweep (Sweep) for every compile, is
	// what the compile had to keep to be valid (the validity rules 1 and
	// 4-6 of the package doc): the system prompt, the tool definitions and
	// response format, the first task, every pinned message and the newest
	// turn, counted as the cache figures count them. A sweep sets
	// UsableTokens for a failed compile too (from the Budget RPC).
	MustKeepTokens int `json:"must_keep_tokens,omitempty"`
	// What follows is set only when the compile succeeded.
	Messages   int         `json:"messages"`
	Violations []Violation `json:"violations,omitempty"`
	FactsDue   int         `json:"facts_due"`
	FactsKept  int         `json:"facts_kept"`
	Missing    []string    `json:"missing_facts,omitempty"`
	// UsedTokens is the response's budget.used_token_count, UsableTokens its
	// context window minus reserved output.
	UsedTokens   int  `json:"used_tokens"`
	UsableTokens int  `json:"usable_tokens"`
	Compacted    bool `json:"compacted"`
	// Pressured: the compile compacted, or the Budget of the same request
	// without the compaction Route or Compact recorded in the state (the
	// uncompacted context) is over the soft threshold.
	Pressured bool `json:"pressured"`
	// InputTokens is len: the tokens of [system prompt, tools, messages...],
	// counted with CountTokens (tools: the budget's tools_token_count).
	InputTokens int `json:"input_tokens"`
	// First is set on a session's first successful compile, which has no
	// previous input to share a prefix with; PrefixTokens and NewTokens are
	// then 0 and the compile is left out of the cache figures.
	First        bool `json:"first,omitempty"`
	PrefixTokens int  `json:"prefix_tokens"`
	NewTokens    int  `json:"new_tokens"`
}

// uncompacted returns st without the summaries and masks compaction recorded
// in it: the context as it would be had nothing been compacted.
func uncompacted(st *ctxcv1.AgentState) *ctxcv1.AgentState {
	recorded := false
	for _, m := range st.GetContext().GetMessages() {
		if m.GetMask() != nil || m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY {
			recorded = true
			break
		}
	}
	if !recorded {
		return st
	}
	// Every field but the log shared with st, which is only read: a deep
	// copy of a 200-turn log on every compile was a tenth of a replay.
	out, c := &ctxcv1.AgentState{}, &ctxcv1.AgentContext{}
	st.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		out.ProtoReflect().Set(fd, v)
		return true
	})
	messages := c.ProtoReflect().Descriptor().Fields().ByName("messages")
	st.GetContext().ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd != messages {
			c.ProtoReflect().Set(fd, v)
		}
		return true
	})
	for _, m := range st.GetContext().GetMessages() {
		switch {
		case m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY:
			continue
		case m.GetMask() != nil:
			m = proto.CloneOf(m)
			m.Mask = nil
		}
		c.Messages = append(c.Messages, m)
	}
	out.Context = c
	return out
}

// OK reports whether the compile succeeded.
func (c *Compile) OK() bool { return c.Code == "" }

func (r *replay) compile(ctx context.Context, line int, afterStep bool) (Compile, error) {
	window := r.window
	opts := &ctxcv1.CompileOptions{MaxContextTokenCount: &window}
	rec := Compile{Session: r.session.Header.ID, Profile: r.profile, Window: r.window, Line: line, Turn: r.turn, AfterStep: afterStep}
	start := r.opts.Now()
	resp, err := r.svc.Compile(ctx, &ctxcv1.CompileRequest{State: r.state, Profile: r.profile, Options: opts})
	rec.LatencyMicros = r.opts.Now().Sub(start).Microseconds()
	rec.RouteMicros, r.routed = r.routed.Microseconds(), 0
	if err != nil {
		st := status.Convert(err)
		rec.Code, rec.Error = st.Code().String(), st.Message()
		if r.opts.mustKeep {
			br, err := r.svc.Budget(ctx, &ctxcv1.BudgetRequest{State: r.state, Profile: r.profile, Options: opts})
			if err != nil {
				return rec, fmt.Errorf("%s line %d: Budget with profile %s: %w", r.session.Name, line, r.profile, err)
			}
			b := br.GetBudget()
			rec.UsableTokens = int(b.GetContextWindowTokenCount()) - int(b.GetReservedOutputTokenCount())
			if rec.MustKeepTokens, err = r.mustKeepTokens(ctx, int(b.GetBreakdown().GetToolsTokenCount())); err != nil {
				return rec, fmt.Errorf("%s line %d: %w", r.session.Name, line, err)
			}
		}
		return rec, nil
	}
	msgs := resp.GetMessages()
	rec.Messages = len(msgs)
	rec.Violations = checkCompiled(r.state, msgs)
	due, missing := keptFacts(r.facts, r.seen, r.turn, contextText(msgs))
	rec.FactsDue, rec.FactsKept, rec.Missing = due, due-len(missing), missing

	b := resp.GetBudget()
	rec.UsedTokens = int(b.GetUsedTokenCount())
	rec.UsableTokens = int(b.GetContextWindowTokenCount()) - int(b.GetReservedOutputTokenCount())
	rec.Compacted = resp.GetReport().GetCompacted()
	rec.Pressured = rec.Compacted
	if !rec.Pressured {
		br, err := r.svc.Budget(ctx, &ctxcv1.BudgetRequest{State: uncompacted(r.state), Profile: r.profile, Options: opts})
		if err != nil {
			return rec, fmt.Errorf("%s line %d: Budget with profile %s: %w", r.session.Name, line, r.profile, err)
		}
		rec.Pressured = br.GetBudget().GetOverSoftThreshold()
	}

	cur, err := r.items(ctx, msgs, int(b.GetBreakdown().GetToolsTokenCount()))
	if err != nil {
		return rec, fmt.Errorf("%s line %d: %w", r.session.Name, line, err)
	}
	for _, n := range cur.tokens {
		rec.InputTokens += n
	}
	if r.prev == nil {
		rec.First = true
	} else {
		rec.PrefixTokens = commonPrefixTokens(r.prev.items, cur.items, cur.tokens)
		rec.NewTokens = newTokens(msgs, cur, r.prev.logIDs)
	}
	r.prev = cur
	if r.opts.mustKeep {
		if rec.MustKeepTokens, err = r.mustKeepTokens(ctx, int(b.GetBreakdown().GetToolsTokenCount())); err != nil {
			return rec, fmt.Errorf("%s line %d: %w", r.session.Name, line, err)
		}
	}
	return rec, nil
}

// mustKeepTokens is what a compile of the current state must keep to be
// valid: the system prompt (as a system message), toolTokens, and the first
// task, the pinned messages and the newest turn of the log, each once.
func (r *replay) mustKeepTokens(ctx context.Context, toolTokens int) (int, error) {
	c := r.state.GetContext()
	var msgs []*ctxcv1.Message
	if sp := c.GetSystemPrompt(); sp != "" {
		msgs = append(msgs, &ctxcv1.Message{Role: ctxcv1.Role_ROLE_SYSTEM, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: sp}}}})
	}
	log := c.GetMessages()
	first, newest := firstUser(log), lastUser(log)
	for i, m := range log {
		if i == first || i == newest || m.GetPinned() {
			msgs = append(msgs, m)
		}
	}
	keys := make([]contentKey, len(msgs))
	for i, m := range msgs {
		keys[i] = keyOf(m)
	}
	counts, err := r.counter.count(ctx, r.state.GetModel().GetName(), msgs, keys)
	if err != nil {
		return 0, err
	}
	n := toolTokens
	for _, k := range counts {
		n += k
	}
	return n, nil
}

// items splits a compiled input into its items: the system prompt (message 0
// when it is a system message), the tool definitions as one item, then every
// other message; with the tokens of each.
func (r *replay) items(ctx context.Context, msgs []*ctxcv1.Message, toolTokens int) (*compiled, error) {
	c := &compiled{logIDs: map[string]bool{}}
	for _, m := range r.state.GetContext().GetMessages() {
		c.logIDs[m.GetId()] = true
	}
	keys := make([]contentKey, len(msgs))
	for i, m := range msgs {
		keys[i] = keyOf(m)
	}
	counts, err := r.counter.count(ctx, r.state.GetModel().GetName(), msgs, keys)
	if err != nil {
		return nil, err
	}
	c.msgTokens = counts
	rest := 0
	if len(msgs) > 0 && msgs[0].GetRole() == ctxcv1.Role_ROLE_SYSTEM {
		c.items, c.tokens = append(c.items, keys[0]), append(c.tokens, counts[0])
		rest = 1
	}
	c.items = append(c.items, toolsKey(r.state.GetContext()))
	c.tokens = append(c.tokens, toolTokens)
	c.items = append(c.items, keys[rest:]...)
	c.tokens = append(c.tokens, counts[rest:]...)
	return c, nil
}

// commonPrefixTokens is the tokens of the longest run of leading items of
// cur equal to prev's.
func commonPrefixTokens(prev, cur []contentKey, tokens []int) int {
	n := 0
	for i := 0; i < len(prev) && i < len(cur) && prev[i] == cur[i]; i++ {
		n += tokens[i]
	}
	return n
}

// newTokens is the tokens of the compiled messages that show log messages
// the previous compile's state did not have. Messages with no log id
// (summaries, placeholders) are changed, not new.
func newTokens(msgs []*ctxcv1.Message, cur *compiled, prevLog map[string]bool) int {
	n := 0
	for i, m := range msgs {
		if id := m.GetId(); cur.logIDs[id] && !prevLog[id] {
			n += cur.msgTokens[i]
		}
	}
	return n
}

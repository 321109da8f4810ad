package routing

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Route appends one input to a copy of st and returns the copy. st is never
// modified. Inputs that cannot be appended are a *agentstate.InvalidArgumentError
// (reason ReasonInvalidRouteInput) listing every bad field; nothing is appended
// then. Route does not check the schema version or provider lock: call
// CheckLifecycle first.
func Route(st *agentstate.State, in Input, opts Options) (*Result, error) {
	if st == nil {
		st = &agentstate.State{}
	}
	r := newRouter(st, opts)
	switch in := in.(type) {
	case UserTurn:
		return r.userTurn(&in)
	case *UserTurn:
		if in != nil {
			return r.userTurn(in)
		}
	case Step:
		return r.step(&in)
	case *Step:
		if in != nil {
			return r.step(in)
		}
	case Event:
		return r.event(&in)
	case *Event:
		if in != nil {
			return r.event(in)
		}
	}
	return nil, invalid([]agentstate.FieldViolation{{Field: "input", Description: "exactly one of user_turn, step or event is required"}})
}

// call is what the router knows of one tool call.
type call struct {
	executionID string
	name        string
	// madeBy and answeredBy name the calling and answering messages, for error text.
	madeBy     place
	answeredBy place
}

// place names where an id or a call was met, for error text. It is
// written out only when a request is refused: naming every message of a
// long log on every Route call cost a Sprintf each.
type place struct {
	text   string // a field path of the request, or what made an id
	logIdx int    // where in the log, for a log message
	logID  string // the log message's id
	inLog  bool
	byID   bool // name the log message by its id, not its index
}

// logPlace is the log message at i; byID names it by its id, else by index.
func logPlace(i int, id string, byID bool) place {
	return place{logIdx: i, logID: id, inLog: true, byID: byID}
}

func (p place) String() string {
	switch {
	case !p.inLog:
		return p.text
	case p.byID:
		return fmt.Sprintf("message %q", p.logID)
	}
	return fmt.Sprintf("the log (message %d)", p.logIdx)
}

// known reports whether p names a place (the zero place names none).
func (p place) known() bool { return p.inLog || p.text != "" }

// router holds the indexes of one Route call.
type router struct {
	st   *agentstate.State
	opts Options
	log  []agentstate.Message
	// ids maps every message id of the log, and each explicit id of the input
	// once checked, to where it is used.
	ids        map[string]place
	calls      map[string]*call
	violations []agentstate.FieldViolation
}

func newRouter(st *agentstate.State, opts Options) *router {
	log := st.Context.Messages
	r := &router{st: st, opts: opts, log: log, ids: make(map[string]place, len(log)), calls: make(map[string]*call)}
	for i := range log {
		m := &log[i]
		if m.ID != "" {
			r.ids[m.ID] = logPlace(i, m.ID, false)
		}
		for j := range m.Parts {
			p := &m.Parts[j]
			switch p.Kind {
			case agentstate.PartToolCall:
				if _, seen := r.calls[p.ToolCall.ID]; !seen && p.ToolCall.ID != "" {
					r.calls[p.ToolCall.ID] = &call{executionID: m.ExecutionID, name: p.ToolCall.Name, madeBy: logPlace(i, m.ID, true)}
				}
			case agentstate.PartToolResult:
				if c := r.calls[p.ToolResult.ToolCallID]; c != nil && !c.answeredBy.known() {
					c.answeredBy = logPlace(i, m.ID, true)
				}
			}
		}
	}
	return r
}

func (r *router) violate(field, description string) {
	r.violations = append(r.violations, agentstate.FieldViolation{Field: field, Description: description})
}

func (r *router) err() error {
	if len(r.violations) == 0 {
		return nil
	}
	return invalid(r.violations)
}

func invalid(v []agentstate.FieldViolation) error {
	return &agentstate.InvalidArgumentError{Reason: ReasonInvalidRouteInput, Violations: v}
}

func (r *router) userTurn(in *UserTurn) (*Result, error) {
	leading := 0
	for leading < len(in.Messages) && in.Messages[leading].Role == agentstate.RoleSystem {
		leading++
	}
	prompt := make([]string, 0, leading)
	for i := 0; i < leading; i++ {
		m := &in.Messages[i]
		for j := range m.Parts {
			if m.Parts[j].Kind != agentstate.PartText {
				r.violate(fmt.Sprintf("user_turn.messages[%d].parts[%d]", i, j), "a leading ROLE_SYSTEM message sets the system prompt: only text parts are allowed")
			}
		}
		prompt = append(prompt, m.Text())
	}
	r.checkIDs("user_turn", in.Messages, leading)
	users := 0
	for i := leading; i < len(in.Messages); i++ {
		m := &in.Messages[i]
		path := fmt.Sprintf("user_turn.messages[%d]", i)
		switch m.Role {
		case agentstate.RoleUser:
			if m.Kind == agentstate.KindRegular {
				users++
			}
		case agentstate.RoleSystem:
		default:
			r.violate(path+".role", fmt.Sprintf("a user turn holds ROLE_USER messages (and ROLE_SYSTEM ones, kept as events), not %s: send assistant output and tool results in a step", roleName(m.Role)))
		}
		r.checkKind(path, m)
		r.checkParts(path, m)
	}
	if users == 0 {
		r.violate("user_turn.messages", "at least one regular ROLE_USER message is required")
	}
	executionID := in.ExecutionID
	if executionID != "" && r.executionUsed(executionID) {
		r.violate("user_turn.execution_id", fmt.Sprintf("execution %q already exists in this state: a user turn starts a new execution", executionID))
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	if executionID == "" {
		executionID = r.newExecutionID()
	}

	msgs := make([]agentstate.Message, 0, len(in.Messages)-leading)
	for i := leading; i < len(in.Messages); i++ {
		m := adopt(in.Messages[i])
		output := OutputUser
		if m.Role == agentstate.RoleSystem || m.Kind == agentstate.KindEvent {
			m.Kind = agentstate.KindEvent
			output = OutputEvent
		}
		if m.ID == "" {
			m.ID = r.fresh(fmt.Sprintf("%s-u%d", executionID, i))
		}
		m.ExecutionID = executionID
		m.Metadata[MetaOutput] = output
		r.stamp(&m)
		msgs = append(msgs, m)
	}
	next := r.next(msgs)
	res := &Result{State: next, AppendedIDs: ids(msgs)}
	if leading > 0 {
		next.Context.SystemPrompt = strings.Join(prompt, "\n\n")
		res.SystemPromptReplaced = true
	}
	if r.st.Execution.Running() {
		res.InterruptedExecutionID = r.st.Execution.ID
	}
	next.Execution = agentstate.Execution{ID: executionID, Status: agentstate.ExecutionRunning}
	return res, nil
}

func (r *router) step(in *Step) (*Result, error) {
	exec := r.st.Execution
	if !exec.Running() {
		desc := "no execution is running: send a user_turn to start one"
		if exec.ID != "" {
			desc = fmt.Sprintf("execution %q has finished (%s): send a user_turn to start a new one", exec.ID, statusName(exec.Status))
		}
		return nil, invalid([]agentstate.FieldViolation{{Field: "step", Description: desc}})
	}
	msgs, lastAssistant := r.stepMessages(in, exec.ID)
	if err := r.err(); err != nil {
		return nil, err
	}
	reason := stepReason(in, msgs, lastAssistant)
	stepTag := strconv.FormatUint(uint64(exec.StepIndex), 10)
	r.tagStep(msgs, exec, stepTag)
	if in.Usage != nil {
		u := *in.Usage
		msgs[lastAssistant].Usage = &u
	}
	if reason == FinishError {
		msgs = append(msgs, r.errorMessage(exec, in.Error, stepTag))
	}

	next := r.next(msgs)
	res := &Result{State: next, AppendedIDs: ids(msgs)}
	switch reason {
	case FinishStop:
		next.Execution.Status = agentstate.ExecutionCompleted
		resolveErrors(next.Context.Messages[:len(r.log)], exec.ID)
		res.ExecutionEnded = true
	case FinishError:
		next.Execution.Status = agentstate.ExecutionFailed
		res.ExecutionEnded = true
	default:
		next.Execution.Status = agentstate.ExecutionRunning
		next.Execution.StepIndex++
	}
	return res, nil
}

// stepMessages checks a step of execution executionID and adopts its
// messages; violations are left in r. lastAssistant is the index of the
// step's last assistant message, -1 when it has none.
func (r *router) stepMessages(in *Step, executionID string) (msgs []agentstate.Message, lastAssistant int) {
	if in.FinishReason > FinishError {
		r.violate("step.finish_reason", fmt.Sprintf("unknown finish reason %d", in.FinishReason))
	}
	if in.Error != "" && in.FinishReason != FinishUnspecified && in.FinishReason != FinishError {
		r.violate("step.error", fmt.Sprintf("an error is only allowed with FINISH_REASON_ERROR, not %s", in.FinishReason))
	}
	failed := in.FinishReason == FinishError || (in.FinishReason == FinishUnspecified && in.Error != "")
	if len(in.Messages) == 0 && !failed {
		r.violate("step.messages", "at least one message is required unless the step failed (FINISH_REASON_ERROR)")
	}
	r.checkIDs("step", in.Messages, 0)

	msgs = make([]agentstate.Message, 0, len(in.Messages)+1)
	lastAssistant = -1
	for i := range in.Messages {
		m := adopt(in.Messages[i])
		path := fmt.Sprintf("step.messages[%d]", i)
		r.checkKind(path, &m)
		r.checkParts(path, &m)
		switch m.Role {
		case agentstate.RoleAssistant:
			lastAssistant = i
			r.registerCalls(path, &m, executionID)
		case agentstate.RoleTool:
			r.answerCalls(path, &m, executionID)
		case agentstate.RoleSystem:
		default:
			r.violate(path+".role", fmt.Sprintf("a step holds ROLE_ASSISTANT and ROLE_TOOL messages (and ROLE_SYSTEM ones, kept as events), not %s: send user input as a user_turn or an event", roleName(m.Role)))
		}
		msgs = append(msgs, m)
	}
	if in.Usage != nil && lastAssistant < 0 {
		r.violate("step.usage", "usage is stored on the step's assistant message, and the step has none")
	}
	return msgs, lastAssistant
}

// stepReason is the step's finish reason, inferred when unspecified: ERROR
// with an error, TOOL_CALLS when the last assistant message calls tools,
// else STOP.
func stepReason(in *Step, msgs []agentstate.Message, lastAssistant int) FinishReason {
	if in.FinishReason != FinishUnspecified {
		return in.FinishReason
	}
	switch {
	case in.Error != "":
		return FinishError
	case lastAssistant >= 0 && msgs[lastAssistant].HasToolCalls():
		return FinishToolCalls
	}
	return FinishStop
}

// tagStep gives a step's messages their ids, execution and ctxc. tags;
// system messages become events.
func (r *router) tagStep(msgs []agentstate.Message, exec agentstate.Execution, stepTag string) {
	for i := range msgs {
		m := &msgs[i]
		output := OutputAssistant
		switch m.Role {
		case agentstate.RoleTool:
			output = OutputToolResult
		case agentstate.RoleSystem:
			m.Kind = agentstate.KindEvent
			output = OutputEvent
		}
		if m.ID == "" {
			m.ID = r.fresh(fmt.Sprintf("%s-s%d-%d", exec.ID, exec.StepIndex, i))
		}
		m.ExecutionID = exec.ID
		m.Metadata[MetaOutput] = output
		m.Metadata[MetaStepIndex] = stepTag
		r.stamp(m)
	}
}

func (r *router) event(in *Event) (*Result, error) {
	if strings.TrimSpace(in.Text) == "" {
		r.violate("event.text", "required: the event's text")
	}
	role := in.Role
	if role == agentstate.RoleUnspecified {
		role = agentstate.RoleUser
	}
	if role != agentstate.RoleUser && role != agentstate.RoleSystem {
		r.violate("event.role", fmt.Sprintf("an event is stored as ROLE_USER or ROLE_SYSTEM, not %s", roleName(role)))
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	executionID := ""
	if r.st.Execution.Running() {
		executionID = r.st.Execution.ID
	}
	md := maps.Clone(in.Metadata)
	if md == nil {
		md = make(map[string]string, 1)
	}
	md[MetaOutput] = OutputEvent
	m := agentstate.Message{
		ID:          r.fresh(fmt.Sprintf("evt-%d", len(r.log))),
		Role:        role,
		Kind:        agentstate.KindEvent,
		Parts:       []agentstate.Part{agentstate.TextPart(in.Text)},
		ExecutionID: executionID,
		Metadata:    md,
	}
	r.stamp(&m)
	return &Result{State: r.next([]agentstate.Message{m}), AppendedIDs: []string{m.ID}}, nil
}

// errorMessage is the visible record of a failed step; see the package doc.
func (r *router) errorMessage(exec agentstate.Execution, text, stepTag string) agentstate.Message {
	body := "The agent step failed."
	if text != "" {
		body = "The agent step failed: " + text
	}
	m := agentstate.Message{
		ID:          r.fresh(fmt.Sprintf("%s-s%d-error", exec.ID, exec.StepIndex)),
		Role:        agentstate.RoleUser,
		Kind:        agentstate.KindEvent,
		Parts:       []agentstate.Part{agentstate.TextPart(body)},
		Pinned:      true,
		ExecutionID: exec.ID,
		Metadata: map[string]string{
			MetaOutput:     OutputError,
			MetaError:      "true",
			MetaUnresolved: "true",
			MetaStepIndex:  stepTag,
		},
	}
	r.stamp(&m)
	return m
}

// resolveErrors unpins the unresolved step errors of log, which is the new
// state's own copy of the old log; the messages' metadata maps are shared
// with the old state, so they are replaced, never written.
func resolveErrors(log []agentstate.Message, by string) {
	for i := range log {
		m := &log[i]
		if m.Metadata[MetaUnresolved] != "true" {
			continue
		}
		md := maps.Clone(m.Metadata)
		delete(md, MetaUnresolved)
		md[MetaResolvedBy] = by
		m.Metadata = md
		m.Pinned = false
	}
}

// registerCalls checks the tool calls of an assistant message of the step and
// records them as waiting for a result.
func (r *router) registerCalls(path string, m *agentstate.Message, executionID string) {
	for j := range m.Parts {
		p := &m.Parts[j]
		if p.Kind != agentstate.PartToolCall {
			continue
		}
		field := fmt.Sprintf("%s.parts[%d].tool_call", path, j)
		if p.ToolCall.Name == "" {
			r.violate(field+".name", "required: the tool's name")
		}
		id := p.ToolCall.ID
		if id == "" {
			r.violate(field+".id", "required: results name the call by this id")
			continue
		}
		if c, dup := r.calls[id]; dup {
			r.violate(field+".id", fmt.Sprintf("call id %q is already used by %s", id, c.madeBy))
			continue
		}
		r.calls[id] = &call{executionID: executionID, name: p.ToolCall.Name, madeBy: place{text: path}}
	}
}

// answerCalls checks that each tool result of the step answers a call of the
// running execution that has no result yet, and copies the tool name from the
// call when the result has none.
func (r *router) answerCalls(path string, m *agentstate.Message, executionID string) {
	for j := range m.Parts {
		p := &m.Parts[j]
		if p.Kind != agentstate.PartToolResult {
			continue
		}
		field := fmt.Sprintf("%s.parts[%d].tool_result.tool_call_id", path, j)
		id := p.ToolResult.ToolCallID
		c := r.calls[id]
		switch {
		case id == "":
			r.violate(field, "required: the id of the call this result answers")
		case c == nil:
			r.violate(field, fmt.Sprintf("no call with id %q was made in execution %q", id, executionID))
		case c.executionID != executionID:
			r.violate(field, fmt.Sprintf("call %q belongs to execution %q, not to the running execution %q", id, c.executionID, executionID))
		case c.answeredBy.known():
			r.violate(field, fmt.Sprintf("call %q already has a result in %s", id, c.answeredBy))
		default:
			c.answeredBy = place{text: path}
			if p.ToolResult.Name == "" {
				p.ToolResult.Name = c.name
			}
		}
	}
}

// checkIDs rejects explicit ids of msgs[from:] that the log or an earlier
// message of the input already uses, and reserves the others so that
// generated ids never take them.
func (r *router) checkIDs(input string, msgs []agentstate.Message, from int) {
	for i := from; i < len(msgs); i++ {
		id := msgs[i].ID
		if id == "" {
			continue
		}
		path := fmt.Sprintf("%s.messages[%d]", input, i)
		if where, dup := r.ids[id]; dup {
			r.violate(path+".id", fmt.Sprintf("id %q is already used by %s", id, where))
			continue
		}
		r.ids[id] = place{text: path}
	}
}

func (r *router) checkKind(path string, m *agentstate.Message) {
	switch m.Kind {
	case agentstate.KindRegular:
	case agentstate.KindEvent:
		if m.Role != agentstate.RoleUser && m.Role != agentstate.RoleSystem {
			r.violate(path+".kind", fmt.Sprintf("only ROLE_USER and ROLE_SYSTEM messages can be events, not %s", roleName(m.Role)))
		}
	default:
		r.violate(path+".kind", fmt.Sprintf("Route appends regular messages and events, not %s: summaries and masks come from Compact", kindName(m.Kind)))
	}
}

func (r *router) checkParts(path string, m *agentstate.Message) {
	if len(m.Parts) == 0 {
		r.violate(path+".parts", "at least one part is required")
		return
	}
	for j := range m.Parts {
		p := &m.Parts[j]
		field := fmt.Sprintf("%s.parts[%d]", path, j)
		switch {
		case p.Kind == agentstate.PartUnspecified || p.Kind > agentstate.PartReasoning:
			r.violate(field, "exactly one of text, tool_call, tool_result, image or reasoning is required")
		case p.Kind == agentstate.PartToolCall && m.Role != agentstate.RoleAssistant:
			r.violate(field+".tool_call", fmt.Sprintf("only ROLE_ASSISTANT messages call tools, not %s", roleName(m.Role)))
		case p.Kind == agentstate.PartToolResult && m.Role != agentstate.RoleTool:
			r.violate(field+".tool_result", fmt.Sprintf("only ROLE_TOOL messages carry tool results, not %s", roleName(m.Role)))
		case m.Role == agentstate.RoleTool && p.Kind != agentstate.PartToolResult:
			r.violate(field, fmt.Sprintf("a ROLE_TOOL message holds only tool_result parts, not %s", p.Kind))
		}
	}
}

// fresh returns candidate, or candidate with the first free "-<k>" suffix,
// and reserves it.
func (r *router) fresh(candidate string) string {
	id := candidate
	for k := 2; r.ids[id].known(); k++ {
		id = candidate + "-" + strconv.Itoa(k)
	}
	r.ids[id] = place{text: "a generated id"}
	return id
}

func (r *router) executionUsed(id string) bool {
	if id == r.st.Execution.ID {
		return true
	}
	for i := range r.log {
		if r.log[i].ExecutionID == id {
			return true
		}
	}
	return false
}

// newExecutionID numbers executions from the count of distinct ones in the
// log, so ids read in order ("exec-1", "exec-2"...), skipping any in use.
func (r *router) newExecutionID() string {
	seen := make(map[string]bool)
	for i := range r.log {
		if id := r.log[i].ExecutionID; id != "" {
			seen[id] = true
		}
	}
	for n := len(seen) + 1; ; n++ {
		id := "exec-" + strconv.Itoa(n)
		if !seen[id] && id != r.st.Execution.ID {
			return id
		}
	}
}

func (r *router) stamp(m *agentstate.Message) {
	if r.opts.Now != nil && m.CreateTime == nil {
		t := r.opts.Now()
		m.CreateTime = &t
	}
}

// next is a copy of the state with appended added to a fresh copy of the log.
func (r *router) next(appended []agentstate.Message) *agentstate.State {
	next := *r.st
	if next.SchemaVersion == 0 {
		next.SchemaVersion = agentstate.CurrentSchemaVersion
	}
	log := make([]agentstate.Message, len(r.log), len(r.log)+len(appended))
	copy(log, r.log)
	next.Context.Messages = append(log, appended...)
	return &next
}

// adopt copies what Route may change of an input message (parts, metadata),
// so the caller's input is never written.
func adopt(m agentstate.Message) agentstate.Message {
	m.Parts = slices.Clone(m.Parts)
	m.Metadata = maps.Clone(m.Metadata)
	if m.Metadata == nil {
		m.Metadata = make(map[string]string, 2)
	}
	return m
}

func ids(msgs []agentstate.Message) []string {
	out := make([]string, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].ID
	}
	return out
}

func roleName(r agentstate.Role) string { return "ROLE_" + strings.ToUpper(r.String()) }

func kindName(k agentstate.MessageKind) string {
	if k == agentstate.KindRegular {
		return "MESSAGE_KIND_UNSPECIFIED"
	}
	return "MESSAGE_KIND_" + strings.ToUpper(k.String())
}

func statusName(s agentstate.ExecutionStatus) string {
	switch s {
	case agentstate.ExecutionCompleted:
		return "completed"
	case agentstate.ExecutionFailed:
		return "failed"
	case agentstate.ExecutionRunning:
		return "running"
	}
	return "status unspecified"
}

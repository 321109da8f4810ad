package statetest

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Options size a generated state and set how often each feature appears.
// Start from DefaultOptions and change what a test needs: zero sizes take their
// defaults, but zero probabilities mean "never".
type Options struct {
	// Turns is the number of user turns; each opens its own execution "e<n>".
	Turns int
	// MaxToolRounds is the most assistant tool-calling steps in one turn.
	MaxToolRounds int
	// MaxParallelCalls is the most tool calls in one assistant message.
	MaxParallelCalls int
	// MaxParts is the most text parts in a user or assistant message.
	MaxParts int
	// LargeOutputBytes is the size of a large tool output.
	LargeOutputBytes int

	// ToolErrorProb is the chance that a tool result is an error.
	ToolErrorProb float64
	// ResolveProb is the chance that an error is followed, in the same turn, by a
	// successful call of the same tool (which resolves it, see
	// policies.UnresolvedFailures).
	ResolveProb float64
	// PinnedProb is the chance that a user, assistant or tool message is pinned.
	PinnedProb float64
	// SummaryProb is the chance that a summary message (Kind summary) comes before
	// a turn. It covers a random contiguous range of earlier log ids, which may
	// include the first task, other summaries or part of a tool unit: consumers
	// must cope with all of these.
	SummaryProb float64
	// EventProb is the chance that an event (Kind event, role user or system)
	// comes before a turn.
	EventProb float64
	// MaskProb is the chance that a tool message or final answer of a finished
	// execution carries a Mask. Pinned messages and the first task are never masked.
	MaskProb float64
	// ReasoningProb is the chance that an assistant message opens with a
	// reasoning part with random signature bytes.
	ReasoningProb float64
	// LargeOutputProb is the chance that a tool output is LargeOutputBytes long.
	LargeOutputProb float64
	// RunningProb is the chance that the last execution is still running; it then
	// may end with calls that have no result yet.
	RunningProb float64
	// NoExecutionProb is the chance that a turn's messages carry no ExecutionID.
	NoExecutionProb float64
	// GroupResultsProb is the chance that parallel results share one tool message.
	GroupResultsProb float64
	// ImageProb is the chance that a user message carries an image.
	ImageProb float64
	// Damage is the chance, per message, of a structural defect of the kinds
	// normalize repairs: a dropped tool message (unanswered calls), an orphan tool
	// result, a tool message moved away from its call, an empty text part, a tool
	// result without its name, a message without parts. The first task and
	// pinned messages are never damaged. 0 keeps the state valid.
	Damage float64
}

// DefaultOptions gives small states (about 5 turns) with every feature present.
func DefaultOptions() Options {
	return Options{
		Turns:            5,
		MaxToolRounds:    3,
		MaxParallelCalls: 3,
		MaxParts:         2,
		LargeOutputBytes: 6000,
		ToolErrorProb:    0.2,
		ResolveProb:      0.5,
		PinnedProb:       0.08,
		SummaryProb:      0.15,
		EventProb:        0.15,
		MaskProb:         0.1,
		ReasoningProb:    0.4,
		LargeOutputProb:  0.15,
		RunningProb:      0.5,
		NoExecutionProb:  0.1,
		GroupResultsProb: 0.3,
		ImageProb:        0.05,
	}
}

var toolNames = []string{"read_file", "run_tests", "grep", "write_file", "http_get"}

var words = strings.Fields("the build fails because main.go imports a missing package so we check the module " +
	"cache then rerun tests with verbose output and compare results against the expected golden " +
	"files ünïcode 日本語 emoji ✓")

// Generate returns a random valid state: ids are unique ("m<n>" for messages,
// "c<n>" for calls), every call of a finished execution has exactly one result
// right after its assistant message, and the state's Execution is the last
// turn's execution (running with Options.RunningProb, else completed or failed).
// The same r and opts give the same state.
func Generate(r *rand.Rand, opts Options) *agentstate.State {
	def := DefaultOptions()
	if opts.Turns <= 0 {
		opts.Turns = def.Turns
	}
	if opts.MaxToolRounds <= 0 {
		opts.MaxToolRounds = def.MaxToolRounds
	}
	if opts.MaxParallelCalls <= 0 {
		opts.MaxParallelCalls = def.MaxParallelCalls
	}
	if opts.MaxParts <= 0 {
		opts.MaxParts = def.MaxParts
	}
	if opts.LargeOutputBytes <= 0 {
		opts.LargeOutputBytes = def.LargeOutputBytes
	}
	g := &generator{r: r, o: opts}
	st := &agentstate.State{
		SchemaVersion: agentstate.CurrentSchemaVersion,
		AgentID:       "agent",
		Model:         agentstate.ModelSpec{Name: "test-model", Provider: "test"},
		Context:       agentstate.Context{SystemPrompt: "You are a careful coding agent."},
	}
	for t := 1; t <= opts.Turns; t++ {
		last := t == opts.Turns
		exec := fmt.Sprintf("e%d", t)
		if g.chance(opts.NoExecutionProb) {
			exec = ""
		}
		running := last && exec != "" && g.chance(opts.RunningProb)
		g.turn(t, exec, running)
		if last {
			st.Execution = agentstate.Execution{ID: exec, StepIndex: uint32(g.r.Intn(10))}
			switch {
			case exec == "":
			case running:
				st.Execution.Status = agentstate.ExecutionRunning
			case g.chance(0.2):
				st.Execution.Status = agentstate.ExecutionFailed
			default:
				st.Execution.Status = agentstate.ExecutionCompleted
			}
		}
	}
	if opts.Damage > 0 {
		g.damage()
	}
	st.Context.Messages = g.msgs
	return st
}

type generator struct {
	r     *rand.Rand
	o     Options
	msgs  []agentstate.Message
	ids   int
	calls int
}

func (g *generator) chance(p float64) bool { return p > 0 && g.r.Float64() < p }

func (g *generator) nextID() string {
	g.ids++
	return fmt.Sprintf("m%d", g.ids)
}

func (g *generator) text(maxWords int) string {
	n := 1 + g.r.Intn(maxWords)
	b := make([]string, n)
	for i := range b {
		b[i] = words[g.r.Intn(len(words))]
	}
	return strings.Join(b, " ")
}

func (g *generator) textParts() []agentstate.Part {
	n := 1 + g.r.Intn(g.o.MaxParts)
	parts := make([]agentstate.Part, n)
	for i := range parts {
		parts[i] = agentstate.TextPart(g.text(12))
	}
	return parts
}

func (g *generator) reasoning() agentstate.Part {
	sig := make([]byte, 16+g.r.Intn(48))
	g.r.Read(sig)
	return agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: "thinking: " + g.text(10), Signature: sig}}
}

func (g *generator) add(m agentstate.Message) *agentstate.Message {
	m.ID = g.nextID()
	g.msgs = append(g.msgs, m)
	return &g.msgs[len(g.msgs)-1]
}

func (g *generator) turn(t int, exec string, running bool) {
	o := g.o
	if len(g.msgs) > 0 && g.chance(o.EventProb) {
		role := agentstate.RoleUser
		if g.chance(0.5) {
			role = agentstate.RoleSystem
		}
		g.add(agentstate.Message{Role: role, Kind: agentstate.KindEvent, Parts: []agentstate.Part{agentstate.TextPart("[event] " + g.text(6))}})
	}
	if len(g.msgs) > 2 && g.chance(o.SummaryProb) {
		a := g.r.Intn(len(g.msgs))
		b := a + 1 + g.r.Intn(len(g.msgs)-a)
		covers := make([]string, 0, b-a)
		for i := a; i < b; i++ {
			covers = append(covers, g.msgs[i].ID)
		}
		g.add(agentstate.Message{Role: agentstate.RoleUser, Kind: agentstate.KindSummary, CoversMessageIDs: covers,
			Parts: []agentstate.Part{agentstate.TextPart(fmt.Sprintf("Summary of %s..%s: %s", covers[0], covers[len(covers)-1], g.text(15)))}})
	}
	user := agentstate.Message{Role: agentstate.RoleUser, ExecutionID: exec, Parts: g.textParts(), Pinned: g.chance(o.PinnedProb)}
	if g.chance(o.ImageProb) {
		user.Parts = append(user.Parts, agentstate.Part{Kind: agentstate.PartImage, Image: agentstate.Image{Source: agentstate.ImageSourceURL, URL: "https://example.com/shot.png", MediaType: "image/png"}})
	}
	g.add(user)
	first := len(g.msgs) == 1
	rounds := g.r.Intn(o.MaxToolRounds + 1)
	var retry []string
	for k := 0; k < rounds || len(retry) > 0; k++ {
		pending := running && g.chance(0.25)
		retry = g.toolRound(exec, running, pending, retry)
		if pending {
			return
		}
		if k > o.MaxToolRounds*2 {
			break
		}
	}
	if running && g.chance(0.5) {
		return // still stepping: no final answer yet
	}
	answer := agentstate.Message{Role: agentstate.RoleAssistant, ExecutionID: exec, Parts: g.textParts(), Pinned: g.chance(o.PinnedProb)}
	if g.chance(o.ReasoningProb) {
		answer.Parts = append([]agentstate.Part{g.reasoning()}, answer.Parts...)
	}
	if !running && !answer.Pinned && !first && g.chance(o.MaskProb/2) {
		answer.Mask = &agentstate.Mask{Reason: "test", Placeholder: "[answer masked]", OriginalTokenCount: 40}
	}
	g.add(answer)
}

// toolRound adds one assistant message with parallel calls and their results.
// retry names tools whose error this round resolves; it returns the tools to
// retry next round. With pending, a random suffix of the calls gets no result.
func (g *generator) toolRound(exec string, running, pending bool, retry []string) []string {
	o := g.o
	n := 1 + g.r.Intn(o.MaxParallelCalls)
	if n < len(retry) {
		n = len(retry)
	}
	asst := agentstate.Message{Role: agentstate.RoleAssistant, ExecutionID: exec, Pinned: g.chance(o.PinnedProb / 2)}
	if g.chance(o.ReasoningProb) {
		asst.Parts = append(asst.Parts, g.reasoning())
	}
	if g.chance(0.3) {
		asst.Parts = append(asst.Parts, agentstate.TextPart(g.text(8)))
	}
	type call struct {
		id, name string
		fixed    bool
	}
	calls := make([]call, n)
	for i := range calls {
		g.calls++
		c := call{id: fmt.Sprintf("c%d", g.calls), name: toolNames[g.r.Intn(len(toolNames))]}
		if i < len(retry) {
			c.name, c.fixed = retry[i], true
		}
		calls[i] = c
		args := fmt.Sprintf(`{"path":"src/%s.go","line":%d}`, words[g.r.Intn(len(words))], g.r.Intn(500))
		asst.Parts = append(asst.Parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: c.id, Name: c.name, ArgumentsJSON: args}})
	}
	g.add(asst)
	answered := n
	if pending {
		answered = g.r.Intn(n + 1)
	}
	var next []string
	var results []agentstate.Part
	for i := 0; i < answered; i++ {
		c := calls[i]
		isErr := !c.fixed && g.chance(o.ToolErrorProb)
		content := g.text(30)
		if isErr {
			content = "error: " + content
			if g.chance(o.ResolveProb) {
				next = append(next, c.name)
			}
		} else if g.chance(o.LargeOutputProb) {
			var b strings.Builder
			for b.Len() < o.LargeOutputBytes {
				b.WriteString(g.text(20))
				b.WriteByte('\n')
			}
			content = b.String()
		}
		results = append(results, agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: c.id, Name: c.name, Content: content, IsError: isErr}})
	}
	maskable := !running || exec == ""
	emit := func(parts []agentstate.Part) {
		m := agentstate.Message{Role: agentstate.RoleTool, ExecutionID: exec, Parts: parts, Pinned: g.chance(o.PinnedProb / 2)}
		if maskable && !m.Pinned && g.chance(o.MaskProb) {
			m.Mask = &agentstate.Mask{Reason: "observation_masking", Placeholder: "[output of " + parts[0].ToolResult.Name + " masked]", OriginalTokenCount: uint32(len(parts[0].ToolResult.Content) / 4)}
		}
		g.add(m)
	}
	if len(results) > 1 && g.chance(o.GroupResultsProb) {
		emit(results)
	} else {
		for _, p := range results {
			emit([]agentstate.Part{p})
		}
	}
	return next
}

// damage breaks the structure of random messages (see Options.Damage).
func (g *generator) damage() {
	firstTask := -1
	for i := range g.msgs {
		if policies.IsTurnStart(&g.msgs[i]) {
			firstTask = i
			break
		}
	}
	out := make([]agentstate.Message, 0, len(g.msgs)+4)
	var moved []agentstate.Message // tool messages to re-insert a few messages later
	var movedAt []int
	for i := range g.msgs {
		m := g.msgs[i]
		for j := 0; j < len(moved); j++ {
			if movedAt[j] <= i {
				out = append(out, moved[j])
				moved = append(moved[:j], moved[j+1:]...)
				movedAt = append(movedAt[:j], movedAt[j+1:]...)
				j--
			}
		}
		if i == firstTask || m.Pinned || !g.chance(g.o.Damage) {
			out = append(out, m)
			continue
		}
		switch g.r.Intn(6) {
		case 0: // drop a tool message: its calls lose their results
			if m.Role != agentstate.RoleTool {
				out = append(out, m)
			}
		case 1: // orphan result
			out = append(out, m)
			out = append(out, agentstate.Message{ID: g.nextID(), Role: agentstate.RoleTool, ExecutionID: m.ExecutionID,
				Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "c-orphan-" + m.ID, Name: "grep", Content: "stray"}}}})
		case 2: // separate a tool message from its call
			if m.Role == agentstate.RoleTool {
				moved = append(moved, m)
				movedAt = append(movedAt, i+1+g.r.Intn(3))
			} else {
				out = append(out, m)
			}
		case 3: // empty text part
			m.Parts = append(append([]agentstate.Part(nil), m.Parts...), agentstate.TextPart(""))
			out = append(out, m)
		case 4: // tool result without its name
			if m.Role == agentstate.RoleTool {
				m.Parts = append([]agentstate.Part(nil), m.Parts...)
				m.Parts[0].ToolResult.Name = ""
			}
			out = append(out, m)
		case 5: // message without parts
			if m.Role == agentstate.RoleUser || (m.Role == agentstate.RoleAssistant && !m.HasToolCalls()) {
				m.Parts = nil
				m.Mask = nil
			}
			out = append(out, m)
		}
	}
	out = append(out, moved...)
	g.msgs = out
}

package routing

import (
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// ignoreResolution ignores the one change Route makes to existing messages:
// resolving an unresolved step error.
var ignoreResolution = cmp.Options{
	cmpopts.IgnoreFields(agentstate.Message{}, "Pinned"),
	cmpopts.IgnoreMapEntries(func(k, _ string) bool { return k == MetaUnresolved || k == MetaResolvedBy }),
	cmpopts.EquateEmpty(),
}

// withoutResolution blanks what resolving a step error changes.
func withoutResolution(m agentstate.Message) agentstate.Message {
	m.Pinned = false
	if _, ok := m.Metadata[MetaUnresolved]; ok {
		m.Metadata = maps.Clone(m.Metadata)
		delete(m.Metadata, MetaUnresolved)
	}
	if _, ok := m.Metadata[MetaResolvedBy]; ok {
		m.Metadata = maps.Clone(m.Metadata)
		delete(m.Metadata, MetaResolvedBy)
	}
	return m
}

// checkAppended asserts what every successful Route guarantees: the old log is
// an unchanged prefix (but for resolution), the appended ids are the reported
// ones, non-empty, tagged and new to the log.
func checkAppended(t *testing.T, before *agentstate.State, res *Result) {
	t.Helper()
	old := before.Context.Messages
	log := res.State.Context.Messages
	if len(log) < len(old) {
		t.Fatalf("log shrank from %d to %d messages", len(old), len(log))
	}
	for i := range old {
		// reflect.DeepEqual first: cmp is too slow for thousands of messages.
		if !reflect.DeepEqual(withoutResolution(old[i]), withoutResolution(log[i])) {
			t.Fatalf("message %d changed (-old +new):\n%s", i, cmp.Diff(old[i], log[i], ignoreResolution))
		}
		if old[i].Pinned != log[i].Pinned && old[i].Metadata[MetaUnresolved] != "true" {
			t.Fatalf("message %d: Pinned changed on a message that was no unresolved error", i)
		}
	}
	taken := make(map[string]bool, len(log))
	for i := range old {
		taken[old[i].ID] = true
	}
	added := log[len(old):]
	if !slices.Equal(ids(added), res.AppendedIDs) {
		t.Fatalf("AppendedIDs %q differ from the appended messages' ids %q", res.AppendedIDs, ids(added))
	}
	for _, m := range added {
		if m.ID == "" || taken[m.ID] {
			t.Fatalf("appended id %q is empty or already taken", m.ID)
		}
		taken[m.ID] = true
		if m.Metadata[MetaOutput] == "" {
			t.Fatalf("appended message %q has no %s tag", m.ID, MetaOutput)
		}
	}
}

// simulator drives an agent through random valid inputs (and some invalid
// ones) against its own state.
type simulator struct {
	r     *rand.Rand
	st    *agentstate.State
	calls int
	ids   int
}

// pendingCalls lists the running execution's calls that have no result.
func (s *simulator) pendingCalls() []agentstate.ToolCall {
	exec := s.st.Execution
	if !exec.Running() {
		return nil
	}
	answered := make(map[string]bool)
	for _, m := range s.st.Context.Messages {
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolResult {
				answered[p.ToolResult.ToolCallID] = true
			}
		}
	}
	var out []agentstate.ToolCall
	for _, m := range s.st.Context.Messages {
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartToolCall && m.ExecutionID == exec.ID && !answered[p.ToolCall.ID] {
				out = append(out, p.ToolCall)
			}
		}
	}
	return out
}

// id returns "" (generate one) or a fresh explicit id.
func (s *simulator) id() string {
	if s.r.Intn(2) == 0 {
		return ""
	}
	s.ids++
	return fmt.Sprintf("x%d", s.ids)
}

func (s *simulator) results(calls []agentstate.ToolCall) []agentstate.Message {
	var out []agentstate.Message
	for _, c := range calls {
		out = append(out, msg(s.id(), tool, resultPart(c.ID, "", "out of "+c.Name, s.r.Intn(4) == 0)))
	}
	return out
}

func (s *simulator) step() Step {
	var st Step
	pending := s.pendingCalls()
	s.r.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
	st.Messages = s.results(pending[:s.r.Intn(len(pending)+1)])
	a := msg(s.id(), assistant, text("working"))
	var calls []agentstate.ToolCall
	for range s.r.Intn(4) {
		s.calls++
		c := agentstate.ToolCall{ID: fmt.Sprintf("rc%d", s.calls), Name: "grep"}
		calls = append(calls, c)
		a.Parts = append(a.Parts, agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: c})
	}
	st.Messages = append(st.Messages, a)
	if s.r.Intn(5) == 0 {
		st.Messages = append(st.Messages, msg(s.id(), system, text("note")))
	}
	st.Messages = append(st.Messages, s.results(calls[:s.r.Intn(len(calls)+1)])...)
	if s.r.Intn(2) == 0 {
		st.Usage = &agentstate.Usage{InputTokens: uint32(s.r.Intn(5000)), OutputTokens: uint32(s.r.Intn(500))}
	}
	switch k := s.r.Intn(10); {
	case k < 2:
		st.FinishReason, st.Error = FinishError, "boom"
	case k < 3:
		st.FinishReason = FinishLength
	case k < 4:
		st.FinishReason = FinishUnspecified
	case len(calls) > 0:
		st.FinishReason = FinishToolCalls
	default:
		st.FinishReason = FinishStop
	}
	return st
}

func (s *simulator) invalid() Input {
	var existing string
	if log := s.st.Context.Messages; len(log) > 0 {
		existing = log[s.r.Intn(len(log))].ID
	}
	switch s.r.Intn(4) {
	case 0:
		if existing != "" {
			return UserTurn{Messages: []agentstate.Message{msg(existing, user, text("dup"))}}
		}
		fallthrough
	case 1:
		return Step{FinishReason: FinishToolCalls, Messages: []agentstate.Message{msg("", tool, resultPart("nope", "grep", "", false))}}
	case 2:
		return UserTurn{Messages: []agentstate.Message{msg("", assistant, text("not a user"))}}
	default:
		return Event{}
	}
}

func (s *simulator) next() (in Input, valid bool) {
	k := s.r.Intn(20)
	switch {
	case k < 2:
		return s.invalid(), false
	case k < 5:
		return Event{Text: "something happened", Role: []agentstate.Role{0, user, system}[s.r.Intn(3)]}, true
	case k < 11 && s.st.Execution.Running():
		return s.step(), true
	default:
		turn := UserTurn{Messages: []agentstate.Message{msg(s.id(), user, text("do the next thing"))}}
		if s.r.Intn(4) == 0 {
			turn.Messages = append([]agentstate.Message{msg("", system, text("new prompt"))}, turn.Messages...)
		}
		return turn, true
	}
}

// TestRouteRandomSequences routes random sequences onto random generated
// states and checks, after every call, that nothing already in the log is lost,
// changed or reordered, that ids stay unique, and that the execution moves as
// the finish reasons say.
func TestRouteRandomSequences(t *testing.T) {
	opts := statetest.DefaultOptions()
	opts.Turns = 3
	opts.LargeOutputProb = 0
	for seed := int64(0); seed < 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		s := &simulator{r: r, st: statetest.Generate(r, opts)}
		if seed%5 == 0 {
			s.st = &agentstate.State{}
		}
		for op := 0; op < 40; op++ {
			in, valid := s.next()
			before := deepCopy(s.st)
			res, err := Route(s.st, in, Options{})
			if !reflect.DeepEqual(before, s.st) {
				t.Fatalf("seed %d op %d: Route modified its input (-before +after):\n%s", seed, op, cmp.Diff(before, s.st))
			}
			if !valid {
				var iae *agentstate.InvalidArgumentError
				if !errors.As(err, &iae) || len(iae.Violations) == 0 {
					t.Fatalf("seed %d op %d: invalid input %+v: got err %v", seed, op, in, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("seed %d op %d: valid input %+v rejected: %v", seed, op, in, err)
			}
			checkAppended(t, before, res)
			seen := make(map[string]bool)
			for _, m := range res.State.Context.Messages {
				if seen[m.ID] {
					t.Fatalf("seed %d op %d: duplicate id %q in the log", seed, op, m.ID)
				}
				seen[m.ID] = true
			}
			if step, ok := in.(Step); ok {
				exec := res.State.Execution
				wantStep := before.Execution.StepIndex
				if !res.ExecutionEnded {
					wantStep++
				}
				if exec.ID != before.Execution.ID || exec.StepIndex != wantStep || exec.Running() == res.ExecutionEnded {
					t.Fatalf("seed %d op %d: step %v moved execution %+v to %+v (ended %v)", seed, op, step.FinishReason, before.Execution, exec, res.ExecutionEnded)
				}
			}
			s.st = res.State
		}
	}
}

package pipelinetest

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/contextcompiler/ctxc/internal/components"
	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/plan"
)

// windowResolver gives every model the same window and the fake 4-bytes-a-token
// counter, so the property tests exercise the policies, not the tokenizers.
type windowResolver struct{ window, output int }

func (r windowResolver) Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error) {
	return agentstate.ModelInfo{Name: spec.Name, ContextWindow: r.window, MaxOutputTokens: r.output}, statetest.FakeCounter{}, nil
}

// propertyCatalog builds every policy for window. outputs is what was read
// of tool outputs, shared by the catalogs of one test as `ctxc serve` shares
// it between calls: reading the same generated outputs again for every
// catalog was most of the property test's time.
func propertyCatalog(t testing.TB, window int, profiles []pipeline.ProfileSpec, outputs *diagnose.Cache) *pipeline.Catalog {
	t.Helper()
	reg, err := components.Registry(components.Deps{Outputs: outputs})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pipeline.NewCatalog(reg, windowResolver{window: window, output: 256}, noop.NewTracerProvider(), pipeline.Config{Profiles: profiles})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// windowedCatalog is propertyCatalog with each run's window taken from its
// state's model (withWindow).
func windowedCatalog(t testing.TB, profiles []pipeline.ProfileSpec, outputs *diagnose.Cache) *pipeline.Catalog {
	t.Helper()
	reg, err := components.Registry(components.Deps{Outputs: outputs})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pipeline.NewCatalog(reg, specResolver{windowResolver{output: 256}}, noop.NewTracerProvider(), pipeline.Config{Profiles: profiles})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withWindow is st with its model's window set to window.
func withWindow(st *agentstate.State, window int) *agentstate.State {
	out := *st
	w := uint32(window)
	out.Model.ContextWindowTokens = &w
	return &out
}

// isolationProfiles put each isolation policy in front of the full compaction chain.
func isolationProfiles(t testing.TB) []pipeline.ProfileSpec {
	t.Helper()
	builtin, err := pipeline.BuiltinProfiles()
	if err != nil {
		t.Fatal(err)
	}
	var full pipeline.ProfileSpec
	for _, p := range builtin {
		if p.Name == "policy-driven" {
			full = p
		}
	}
	var out []pipeline.ProfileSpec
	for _, iso := range []string{"transparent", "boundary", "observation_masking"} {
		p := full
		p.Name = "full-" + iso
		p.Stages = append([]pipeline.StepSpec(nil), full.Stages...)
		p.Stages[2] = pipeline.StepSpec{Policy: iso}
		out = append(out, p)
	}
	return out
}

// fullSize is what the whole log costs by the fake counter.
func fullSize(st *agentstate.State) int {
	c := statetest.FakeCounter{}
	sys, tools := c.CountPreamble(&st.Context)
	n := sys + tools
	for i := range st.Context.Messages {
		t, _ := c.CountMessage(&st.Context.Messages[i])
		n += t
	}
	return n
}

// checkCompiled asserts the invariants of docs/ARCHITECTURE.md on one compiled result.
//
// cutToFit reports whether the compiled message id is its log message with
// tool outputs cut to fit the window and nothing else changed (truncate
// shrinks what is protected before it refuses: policies.ShrunkFrom).
func cutToFit(st *agentstate.State, w *policies.Work, id string) bool {
	var was *agentstate.Message
	for i := range st.Context.Messages {
		if st.Context.Messages[i].ID == id {
			was = &st.Context.Messages[i]
		}
	}
	for i := range w.Entries {
		if w.Entries[i].SourceID == id && was != nil {
			return policies.ShrunkFrom(&w.Entries[i].Message, was)
		}
	}
	return false
}

// condensedToFit reports whether the message id of a running execution was
// condensed because the window could not hold it: masked in a run whose view
// exceeded the window at some compaction point (its report says how many
// tokens it had there), or planned down by llm_plan because what must be
// kept did not fit. Invariant 6 lets the running task's older steps be
// compacted then.
func condensedToFit(w *policies.Work, compaction policies.CompactionReport, id string) bool {
	d, ok := w.Disposition(id)
	switch {
	case !ok:
		return false
	case d.Policy == plan.Type:
		return strings.HasSuffix(d.Reason, plan.WidenedReason)
	case d.Disposition != policies.DispositionMasked:
		return false
	}
	return slices.ContainsFunc(compaction.Points, func(p policies.CompactionPoint) bool { return p.TokensBefore > w.HardLimit() })
}

// shrinkRunning allows what invariant 6 of docs/ARCHITECTURE.md allows when
// what must be kept does not fit the window without it: the running
// execution's tool results shrunk in place (by llm_plan), still shown and
// each with its disposition.
func checkCompiled(t *testing.T, label string, st *agentstate.State, res *pipeline.Result, shrinkRunning bool) {
	t.Helper()
	w := res.Work
	var problems []string
	problems = append(problems, statetest.Check(w)...)
	for _, p := range statetest.CheckPreserved(st, w) {
		if id, ok := strings.CutSuffix(p, " of the running execution is changed"); ok && (shrinkRunning || cutToFit(st, w, id) || condensedToFit(w, res.Report.Compaction, id)) {
			continue
		}
		problems = append(problems, p)
	}
	if w.Budget != nil && w.HardLimit() > 0 && w.UsedTokens() > w.HardLimit() {
		problems = append(problems, fmt.Sprintf("uses %d tokens, over the hard limit %d", w.UsedTokens(), w.HardLimit()))
	}
	// The kept tail is contiguous: after the first kept entry of the latest turns,
	// every log message of those turns is still shown, in order.
	msgs := res.Messages()
	if sp := st.Context.SystemPrompt; sp != "" && (len(msgs) == 0 || msgs[0].Role != agentstate.RoleSystem || msgs[0].Text() != sp) {
		problems = append(problems, "the system prompt is not the first message")
	}
	for _, p := range problems {
		t.Errorf("%s: %s", label, p)
	}
}

// TestEveryProfileKeepsTheInvariants runs every built-in profile and every
// isolation policy over generated states and windows from roomy to tight.
func TestEveryProfileKeepsTheInvariants(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	// 400 states at three windows each: 1,200 (state, budget) pairs per profile.
	states := 400
	if testing.Short() {
		states = 40
	}
	profiles := isolationProfiles(t)
	names := []string{"pragmatic", "budget-aware", "policy-driven", "llm-assisted"}
	for _, p := range profiles {
		names = append(names, p.Name)
	}
	irreducible, compacted := 0, 0
	outputs := diagnose.NewCache()
	// One catalog; each run's window is its state's model window (a
	// catalog per window rebuilt the profiles 1,200 times).
	c := windowedCatalog(t, profiles, outputs)
	for seed := range states {
		generate := func() *agentstate.State {
			r := rand.New(rand.NewSource(int64(seed)*7919 + 1))
			opts := statetest.DefaultOptions()
			opts.Turns = 2 + r.Intn(8)
			opts.Damage = []float64{0, 0, 0.1}[seed%3]
			if seed%4 == 3 {
				// A long task: turns of up to twice the steps from which a
				// task compacts its own history (policies.LongTaskSteps).
				opts.Turns = 1 + r.Intn(3)
				opts.MaxToolRounds = 2 * policies.LongTaskSteps
			}
			return statetest.Generate(r, opts)
		}
		// Runs only read the state they are given: calls by reference share
		// a decoded log, and its count memos, between calls
		// (docs/design.md, "Calls by reference"). The same state
		// generated again is what every run must leave it as.
		st, pristine := generate(), generate()
		size := fullSize(st)
		for _, ratio := range []float64{1.5, 0.7, 0.35} {
			window := int(float64(size)*ratio) + 256
			st := withWindow(st, window)
			// budget-aware cannot fit what it must keep verbatim, or only by cutting
			// its protected outputs (it runs
			// before llm-assisted, which may then shrink the running
			// execution's tool results instead of refusing).
			cannotFit := false
			for _, name := range names {
				label := fmt.Sprintf("seed %d window %d (%.2f of %d) profile %s", seed, window, ratio, size, name)
				res, err := c.Run(t.Context(), pipeline.Request{Profile: name, State: st})
				readOnly(t, label, st, pristine)
				var irr *agentstate.IrreducibleError
				if errors.As(err, &irr) {
					cannotFit = cannotFit || name == "budget-aware"
					irreducible++
					if strings.Contains(irr.Detail, "compacted as far as") {
						t.Errorf("%s: the transforms left the context over the window: %v", label, irr)
					}
					if irr.AvailableTokens <= 0 || irr.NeededTokens <= irr.AvailableTokens {
						t.Errorf("%s: irreducible error with nonsense numbers %+v", label, irr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				if res.Report.Compacted {
					compacted++
				}
				if name == "budget-aware" && slices.ContainsFunc(res.Report.Warnings, func(w string) bool { return strings.Contains(w, "to fit the window; the full output stays in the log") }) {
					cannotFit = true // what must be kept fits only with its outputs cut
				}
				shrinkRunning := cannotFit && name == "llm-assisted"
				checkCompiled(t, label, st, res, shrinkRunning)

				// Compact, then compile the compacted state: the same invariants hold
				// and the log keeps every message it had.
				cres, err := c.Compact(t.Context(), pipeline.Request{Profile: name, State: st})
				readOnly(t, label+" compact", st, pristine)
				if errors.As(err, &irr) {
					continue
				}
				if err != nil {
					t.Fatalf("%s: compact: %v", label, err)
				}
				if len(cres.State.Context.Messages) < len(st.Context.Messages) {
					t.Errorf("%s: compact lost messages: %d -> %d", label, len(st.Context.Messages), len(cres.State.Context.Messages))
				}
				for i := range st.Context.Messages {
					if cres.State.Context.Messages[i].ID != st.Context.Messages[i].ID {
						t.Fatalf("%s: compact reordered the log at %d", label, i)
					}
				}
				res2, err := c.Run(t.Context(), pipeline.Request{Profile: name, State: cres.State})
				if errors.As(err, &irr) {
					continue
				}
				if err != nil {
					t.Fatalf("%s: compile after compact: %v", label, err)
				}
				checkCompiled(t, label+" after compact", cres.State, res2, shrinkRunning)
			}
		}
	}
	// The generated windows must exercise both outcomes, or the test proves little.
	if compacted == 0 || irreducible == 0 {
		t.Errorf("compacted %d runs, irreducible %d: the windows do not exercise compaction", compacted, irreducible)
	}
	t.Logf("compacted %d runs, %d irreducible", compacted, irreducible)
}

// readOnly fails the test when a run changed the log it was given.
func readOnly(t *testing.T, label string, st, pristine *agentstate.State) {
	t.Helper()
	if !reflect.DeepEqual(st.Context, pristine.Context) {
		t.Fatalf("%s: the run changed the state it was given", label)
	}
}

// FuzzEveryProfile runs every profile on arbitrary states decoded from bytes:
// no panic, and no run may end in an invariant violation (a bug) — only in a
// compiled context that keeps the invariants or in a typed irreducible error.
func FuzzEveryProfile(f *testing.F) {
	for i, seed := range fuzzSeeds(8) {
		f.Add(seed, uint16(500+i*300))
	}
	f.Add([]byte{}, uint16(0))
	profiles := isolationProfiles(f)
	outputs := diagnose.NewCache()
	f.Fuzz(func(t *testing.T, data []byte, window uint16) {
		st := acceptedState(statetest.FromBytes(data))
		if !passesRequestValidation(st) {
			t.Fatalf("acceptedState left a state the server rejects: %+v", st.Context.Messages)
		}
		c := propertyCatalog(t, int(window)+300, profiles, outputs)
		for _, name := range c.Names() {
			res, err := c.Run(t.Context(), pipeline.Request{Profile: name, State: st})
			var irr *agentstate.IrreducibleError
			if errors.As(err, &irr) {
				continue
			}
			if err != nil {
				t.Fatalf("profile %s: %v", name, err)
			}
			checkCompiled(t, "profile "+name, st, res, false)
		}
	})
}

// acceptedState drops from a decoded state what the server's structural
// checks would refuse (messages without an id or a part, with an unknown role
// or a reused id; parts of a tool message other than tool results), so that
// every fuzz input runs the pipeline on a state the server accepts instead of
// being skipped.
func acceptedState(st *agentstate.State) *agentstate.State {
	seen := map[string]bool{}
	var kept []agentstate.Message
	for _, m := range st.Context.Messages {
		var parts []agentstate.Part
		for _, p := range m.Parts {
			if p.Kind != agentstate.PartUnspecified && (m.Role != agentstate.RoleTool || p.Kind == agentstate.PartToolResult) {
				parts = append(parts, p)
			}
		}
		m.Parts = parts
		if m.ID == "" || seen[m.ID] || m.Role == agentstate.RoleUnspecified || m.Role > agentstate.RoleTool || len(m.Parts) == 0 {
			continue
		}
		seen[m.ID] = true
		kept = append(kept, m)
	}
	st.Context.Messages = kept
	return st
}

// fuzzSeeds returns n byte strings that statetest.FromBytes decodes to states
// of eight messages or more that the server accepts as they are
// (acceptedState drops nothing), for the seed corpus `go test` runs. Bytes
// are random (from a fixed seed) but never pick the operations that always
// make a state invalid (a message with no part, a reused id); a string that
// still decodes to an invalid state is drawn again.
func fuzzSeeds(n int) [][]byte {
	r := rand.New(rand.NewSource(1))
	var seeds [][]byte
	for len(seeds) < n {
		b := make([]byte, 40+r.Intn(160))
		for i := range b {
			b[i] = byte(r.Intn(256))
			if op := b[i] % 16; op == 13 || op == 15 {
				b[i]--
			}
		}
		if st := statetest.FromBytes(b); len(st.Context.Messages) >= 8 && passesRequestValidation(st) {
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// passesRequestValidation mirrors the server's structural checks: unique ids,
// known roles, at least one part, tool messages holding only tool results.
func passesRequestValidation(st *agentstate.State) bool {
	seen := map[string]bool{}
	for _, m := range st.Context.Messages {
		if m.ID == "" || seen[m.ID] || m.Role == agentstate.RoleUnspecified || m.Role > agentstate.RoleTool || len(m.Parts) == 0 {
			return false
		}
		seen[m.ID] = true
		for _, p := range m.Parts {
			if p.Kind == agentstate.PartUnspecified || (m.Role == agentstate.RoleTool) != (p.Kind == agentstate.PartToolResult) && m.Role == agentstate.RoleTool {
				return false
			}
		}
	}
	return true
}

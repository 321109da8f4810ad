package compiler

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
	"github.com/contextcompiler/ctxc/internal/compiler/routing"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// runs records what the service observed, as the fields a test compares.
type runs struct {
	mu  sync.Mutex
	got []observedRun
}

type observedRun struct {
	UseCase, Profile string
	Report           bool
	Before, After    int // the budgets' Used, -1 for none
	Err              string
}

func (r *runs) ObserveRun(_ context.Context, run Run) {
	used := func(b *agentstate.Budget) int {
		if b == nil {
			return -1
		}
		return b.Used
	}
	o := observedRun{UseCase: run.UseCase, Profile: run.Profile, Report: run.Report != nil, Before: used(run.Before), After: used(run.After)}
	if run.Err != nil {
		o.Err = run.Err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, o)
}

// TestRunsAreObserved: every pipeline run a use case makes reaches the
// observer once, with the catalog's name of the profile (the default for
// "", none for a name the catalog lacks), the report and budgets of a run
// that succeeded, and the error of one that failed; a Route whose
// compaction failed is observed with the error though the call succeeds.
func TestRunsAreObserved(t *testing.T) {
	irreducible := &agentstate.IrreducibleError{NeededTokens: 9, AvailableTokens: 5}
	running := state()
	running.Execution = agentstate.Execution{ID: "e1", Status: agentstate.ExecutionRunning}
	stop := Step{Messages: []agentstate.Message{text("", agentstate.RoleAssistant, "done")}, FinishReason: routing.FinishStop}
	// The fake counts 3 + len/4 per message: "hi" and "hello" make 3 + 4.
	const used = 7
	tests := []struct {
		name string
		call func(*Service) error
		cat  func(*compilertest.Catalog)
		want []observedRun
	}{
		{"Compile, default profile", func(s *Service) error {
			_, err := s.Compile(t.Context(), CompileRequest{Request: Request{Source: StateSource{State: state()}}})
			return err
		}, nil, []observedRun{{UseCase: "Compile", Profile: "pragmatic", Report: true, Before: used, After: used}}},
		{"Budget produces no context", func(s *Service) error {
			_, err := s.Budget(t.Context(), Request{Source: StateSource{State: state()}, Profile: "custom"})
			return err
		}, nil, []observedRun{{UseCase: "Budget", Profile: "pragmatic", Report: true, Before: -1, After: -1}}},
		{"Compact", func(s *Service) error {
			_, err := s.Compact(t.Context(), Request{Source: StateSource{State: state()}, Profile: "custom"})
			return err
		}, nil, []observedRun{{UseCase: "Compact", Profile: "pragmatic", Report: true, Before: used, After: used}}},
		{"Compact that does not fit", func(s *Service) error {
			_, err := s.Compact(t.Context(), Request{Source: StateSource{State: state()}, Profile: "custom"})
			return err
		}, func(c *compilertest.Catalog) { c.CompactErr = irreducible },
			[]observedRun{{UseCase: "Compact", Profile: "custom", Before: -1, After: -1, Err: irreducible.Error()}}},
		{"Compile of an unknown profile", func(s *Service) error {
			_, err := s.Compile(t.Context(), CompileRequest{Request: Request{Source: StateSource{State: state()}, Profile: "nope"}})
			return err
		}, nil, []observedRun{{UseCase: "Compile", Before: -1, After: -1, Err: (&agentstate.UnknownProfileError{Name: "nope", Known: []string{"custom", "pragmatic"}}).Error()}}},
		{"Route compacting at the end of an execution, irreducible", func(s *Service) error {
			_, err := s.Route(t.Context(), RouteRequest{Source: StateSource{State: running}, Input: stop})
			return err
		}, func(c *compilertest.Catalog) { c.CompactOnExecutionEnd, c.CompactErr = true, irreducible },
			[]observedRun{{UseCase: "Route", Profile: "pragmatic", Before: -1, After: -1, Err: irreducible.Error()}}},
		{"Route that ends nothing runs nothing", func(s *Service) error {
			_, err := s.Route(t.Context(), RouteRequest{Source: StateSource{State: running}, Input: Event{Text: "x"}})
			return err
		}, func(c *compilertest.Catalog) { c.CompactOnExecutionEnd = true }, nil},
		{"a state refused before the pipeline runs nothing", func(s *Service) error {
			_, err := s.Compile(t.Context(), CompileRequest{Request: Request{Source: StateSource{State: foreignState()}}})
			if err == nil {
				return errors.New("a foreign state compiled")
			}
			return nil
		}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := compilertest.NewCatalog()
			if tt.cat != nil {
				tt.cat(cat)
			}
			obs := &runs{}
			s, err := New(Config{Catalog: cat, Counters: compilertest.Counters{}, Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.call(s); err != nil && (len(tt.want) == 0 || tt.want[0].Err == "") {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, obs.got); diff != "" {
				t.Errorf("observed runs (-want +got):\n%s", diff)
			}
		})
	}
}

package policies_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/contextcompiler/ctxc/internal/agentstate"
	"github.com/contextcompiler/ctxc/internal/policies"
)

// Rollback returns the ledger to its checkpoint whatever a step wrote:
// new and overwritten dispositions and masks, appended summaries, repairs
// and warnings. It costs what the step wrote, so the runner can afford it
// at every compaction of a long log. Dispositions are kept by log position
// for the log's messages and by id for others: both are rolled back.
func TestRollbackUndoesWhatAStepWrote(t *testing.T) {
	log := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{{ID: "m0"}, {ID: "m1"}, {ID: "m2"}}}}
	for _, state := range []*agentstate.State{nil, log} {
		testRollback(t, state)
	}
}

func testRollback(t *testing.T, state *agentstate.State) {
	before := func() *policies.Work {
		w := &policies.Work{State: state}
		if state != nil {
			w.Entries = agentstate.EntriesFromLog(state.Context.Messages)
		}
		w.Dispose(policies.MessageReport{MessageID: "m1", Disposition: policies.DispositionMasked, Reason: "masked first"})
		w.SetMask("m1", agentstate.Mask{Reason: "dedupe", Placeholder: "p1"})
		w.Appended = append(make([]agentstate.Message, 0, 8), agentstate.Message{ID: "s1"})
		w.Warn("kept")
		return w
	}
	tests := []struct {
		name string
		step func(w *policies.Work)
	}{
		{"nothing", func(*policies.Work) {}},
		{"new entries", func(w *policies.Work) {
			w.Dispose(policies.MessageReport{MessageID: "m2", Disposition: policies.DispositionSummarized})
			w.Dispose(policies.MessageReport{MessageID: "not-in-log", Disposition: policies.DispositionDropped})
			w.SetMask("m3", agentstate.Mask{Reason: "masking"})
		}},
		{"overwritten twice", func(w *policies.Work) {
			w.Dispose(policies.MessageReport{MessageID: "m1", Disposition: policies.DispositionSummarized, Reason: "one"})
			two := policies.MessageReport{MessageID: "m1", Disposition: policies.DispositionDropped, Reason: "two"}
			if len(w.Entries) > 1 {
				w.DisposeEntry(&w.Entries[1], two) // by position
			} else {
				w.Dispose(two)
			}
			w.SetMask("m1", agentstate.Mask{Reason: "other"})
		}},
		{"appended into spare capacity", func(w *policies.Work) {
			w.Appended = append(w.Appended, agentstate.Message{ID: "s2"})
			w.Repair(policies.Repair{Kind: "r"})
			w.Warn("step")
		}},
		{"ledger slices replaced", func(w *policies.Work) {
			w.Appended = []agentstate.Message{{ID: "s3"}}
			w.Warnings = nil
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/log=%v", tt.name, state != nil), func(t *testing.T) {
			want, w := before(), before()
			cp := w.Checkpoint()
			tt.step(w)
			w.Rollback(cp)
			w.Release()
			if diff := cmp.Diff(want, w, cmpopts.IgnoreUnexported(policies.Work{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("after Rollback (-checkpoint +got):\n%s", diff)
			}
			byID := cmpopts.SortSlices(func(a, b policies.MessageReport) bool { return a.MessageID < b.MessageID })
			if diff := cmp.Diff(want.Dispositions(), w.Dispositions(), byID); diff != "" {
				t.Errorf("dispositions after Rollback (-checkpoint +got):\n%s", diff)
			}
			// Without a checkpoint nothing is recorded: writes stay.
			w.Dispose(policies.MessageReport{MessageID: "m9"})
			if _, ok := w.Disposition("m9"); !ok {
				t.Error("a disposition written after Release was lost")
			}
		})
	}
}

// The ledger keeps records in chunks that grow by appends: past several
// chunks every record is still the one written last for its message, in
// log order, and a rollback across a chunk boundary removes what it added.
func TestDispositionsAcrossChunks(t *testing.T) {
	const n = 2500
	st := &agentstate.State{}
	for i := range n {
		st.Context.Messages = append(st.Context.Messages, agentstate.Message{ID: fmt.Sprintf("m%d", i)})
	}
	w := &policies.Work{State: st, Entries: agentstate.EntriesFromLog(st.Context.Messages)}
	for i := 0; i < n; i += 2 {
		w.DisposeEntry(&w.Entries[i], policies.MessageReport{Disposition: policies.DispositionDropped})
	}
	cp := w.Checkpoint()
	for i := range n {
		w.DisposeEntry(&w.Entries[i], policies.MessageReport{Disposition: policies.DispositionSummarized, Reason: "late"})
	}
	if got := len(w.Dispositions()); got != n {
		t.Fatalf("%d records, want %d", got, n)
	}
	w.Rollback(cp)
	w.Release()
	got := w.Dispositions()
	if len(got) != n/2 {
		t.Fatalf("after rollback %d records, want %d", len(got), n/2)
	}
	for k, r := range got {
		if want := fmt.Sprintf("m%d", 2*k); r.MessageID != want || r.Disposition != policies.DispositionDropped {
			t.Fatalf("record %d = %+v, want %s dropped", k, r, want)
		}
		if d, ok := w.Disposition(r.MessageID); !ok || d != r {
			t.Fatalf("Disposition(%s) = %+v, %v", r.MessageID, d, ok)
		}
	}
}

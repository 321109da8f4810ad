package policies_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
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
		w, _ := policies.NewWork(policies.Input{State: state})
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
		{"appended replaced", func(w *policies.Work) {
			w.Appended = []agentstate.Message{{ID: "s3"}}
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
			if diff := cmp.Diff(want.Report(), w.Report(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("report after Rollback (-checkpoint +got):\n%s", diff)
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
	w, _ := policies.NewWork(policies.Input{State: st})
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

// TestWorkExportsOnlyWhatStagesWrite: the fields of Work are what stages
// produce; the input, the runner's control, a step's notes and the report
// are reached through methods (docs/ARCHITECTURE.md, "Who writes the working
// set"). A new field is either a stage's output, added here, or belongs
// behind one.
func TestWorkExportsOnlyWhatStagesWrite(t *testing.T) {
	var got []string
	for f := range reflect.TypeFor[policies.Work]().Fields() {
		if f.IsExported() {
			got = append(got, f.Name)
		}
	}
	want := []string{
		"Entries", "SystemTokens", "ToolTokens", "Budget", // the view and its measures
		"Decision",                      // the decide stage's
		"Appended", "Masks", "Rendered", // the ledger and the body
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Work's exported fields (-want +got):\n%s", diff)
	}
	st := &agentstate.State{Context: agentstate.Context{Messages: []agentstate.Message{{ID: "m1", Role: agentstate.RoleUser}}}}
	w, ctl := policies.NewWork(policies.Input{State: st, RecentTurns: 3})
	ctl.SetHardLimit(900)
	ctl.SetCompactionTarget(700)
	ctl.SetPass(policies.PassIntake, 4)
	w.Degrade("fell back")
	w.Touch(0)
	if w.HardLimit() != 900 || w.CompactionTarget() != 700 || w.Pass() != policies.PassIntake || w.ScopeStart() != 4 || w.RecentTurns() != 3 {
		t.Errorf("control read back as %d/%d/%v/%d/%d", w.HardLimit(), w.CompactionTarget(), w.Pass(), w.ScopeStart(), w.RecentTurns())
	}
	if notes := ctl.TakeNotes(); !notes.Degraded || notes.DegradedReason != "fell back" || notes.Touches != 1 {
		t.Errorf("notes taken: %+v", notes)
	}
	if notes := ctl.TakeNotes(); notes != (policies.StepNotes{}) {
		t.Errorf("notes after TakeNotes: %+v, want none", notes)
	}
}

// A tape of a run's ledger writes, spanning several of its chunks and cut
// back by rollbacks at every size (mid-chunk, at a chunk's end, to empty),
// replays on a fresh run as the ledger the run kept: its dispositions and
// masks, whatever was rolled back left out, and holds no more than the tape
// of a run that never wrote what was rolled back.
func TestLedgerTapeReplaysTheLedger(t *testing.T) {
	const n = 3000
	msgs := make([]agentstate.Message, n)
	for i := range msgs {
		msgs[i].ID = fmt.Sprintf("m%d", i)
	}
	state := &agentstate.State{Context: agentstate.Context{Messages: msgs}}
	write := func(w *policies.Work, i int, reason string) {
		if i%7 == 0 {
			w.SetMask(msgs[i].ID, agentstate.Mask{Reason: reason})
			return
		}
		w.DisposeEntry(&w.Entries[i], policies.MessageReport{Disposition: policies.DispositionDropped, Reason: reason})
	}
	after := func(w *policies.Work, from int) {
		for i := n - 1; i >= from; i -= 3 {
			write(w, i, "after")
		}
	}
	for _, rollbackAt := range []int{0, 1, 1023, 1024, 1025, 2048, 2999} {
		t.Run(fmt.Sprint(rollbackAt), func(t *testing.T) {
			w, _ := policies.NewWork(policies.Input{State: state})
			w.RecordLedger()
			for i := range rollbackAt {
				write(w, i, "kept")
			}
			cp := w.Checkpoint()
			for i := rollbackAt; i < n; i++ {
				write(w, i, "rolled back")
			}
			w.Rollback(cp)
			w.Release()
			after(w, rollbackAt)
			tape := w.StopRecordingLedger()
			after(w, rollbackAt) // not recorded: it must not change the tape handed over

			direct, _ := policies.NewWork(policies.Input{State: state})
			direct.RecordLedger()
			for i := range rollbackAt {
				write(direct, i, "kept")
			}
			after(direct, rollbackAt)
			if want := direct.StopRecordingLedger(); tape.Len() != want.Len() || tape.Bytes() != want.Bytes() {
				t.Errorf("the tape holds %d writes in %d bytes; without the writes rolled back, %d in %d", tape.Len(), tape.Bytes(), want.Len(), want.Bytes())
			}
			replayed, _ := policies.NewWork(policies.Input{State: state})
			replayed.ReplayLedger(tape)
			if diff := cmp.Diff(w.Dispositions(), replayed.Dispositions(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("dispositions replayed (-run +replayed):\n%s", diff)
			}
			if diff := cmp.Diff(w.Masks, replayed.Masks, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("masks replayed (-run +replayed):\n%s", diff)
			}
		})
	}
}

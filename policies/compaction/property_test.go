package compaction

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// aggressive builds every transform with settings that make it act on small
// generated states.
func aggressive(t testing.TB) []struct {
	name string
	p    policies.Policy
} {
	return []struct {
		name string
		p    policies.Policy
	}{
		{"clamp", newPolicy(t, NewClampFactory(), "{max_part_tokens: 100}")},
		{"dedupe", newPolicy(t, NewDedupeFactory(), "{min_saving_ratio: 0}")},
		{"mask_observations", newPolicy(t, NewMaskObservationsFactory(Deps{}), "{protect_recent_tokens: 0, min_prunable_tokens: 0}")},
		{"drop_low_importance", newPolicy(t, NewDropLowImportanceFactory(), "{min_importance_threshold: 101, keep_recent_messages: 0}")},
		{"summarize", newPolicy(t, NewSummarizeFactory(Deps{}), "{min_span_messages: 1}")},
		{"truncate", newPolicy(t, NewTruncateFactory(Deps{}), "")},
		{"truncate_message_limit", newPolicy(t, NewTruncateFactory(Deps{}), "{mode: message_limit, max_messages: 8}")},
	}
}

// generatedWork returns a generated state and a work over it with a random
// recency window, a target below its size and sometimes an exceeded window.
func generatedWork(seed int64) (*agentstate.State, *policies.Work) {
	r := rand.New(rand.NewSource(seed))
	opts := statetest.DefaultOptions()
	opts.Turns = 2 + r.Intn(6)
	st := statetest.Generate(r, opts)
	w, ctl := statetest.WorkControl(st, statetest.RecentTurns(r.Intn(3)))
	used := w.UsedTokens()
	ctl.SetCompactionTarget(used * (20 + r.Intn(70)) / 100)
	ctl.SetHardLimit(w.CompactionTarget() + r.Intn(used/4+1))
	ctl.SetHardLimitExceeded(used > w.HardLimit() && r.Intn(2) == 0)
	ctl.SetAtEnd(r.Intn(4) != 0)
	return st, w
}

// TestProperties runs every transform over generated states and checks what
// every transform promises.
func TestProperties(t *testing.T) {
	// -short runs the first 60 states; make test all 300.
	states := int64(300)
	if testing.Short() {
		states = 60
	}
	for _, tr := range aggressive(t) {
		t.Run(tr.name, func(t *testing.T) {
			for seed := int64(0); seed < states; seed++ {
				st, w := generatedWork(seed)
				before := snapshotView(w)
				err := run(tr.p, w)
				for _, problem := range checkTransform(st, before, w, err, tr.name == "truncate", true) {
					t.Errorf("seed %d: %s", seed, problem)
				}
				// Deterministic: the same input gives the same output.
				_, again := generatedWork(seed)
				err2 := run(tr.p, again)
				if statetest.Format(w) != statetest.Format(again) || fmt.Sprint(err) != fmt.Sprint(err2) {
					t.Errorf("seed %d: two runs differ", seed)
				}
			}
		})
	}
}

// TestChainProperties runs the whole cheap-first chain the way the runner
// does (skipping transforms once the target is met) and checks that the
// result fits or the chain fails with IrreducibleError.
func TestChainProperties(t *testing.T) {
	chain := aggressive(t)[:6]
	for seed := int64(0); seed < 300; seed++ {
		st, w := generatedWork(seed)
		before := snapshotView(w)
		var err error
		for _, tr := range chain {
			if w.UsedTokens() <= w.CompactionTarget() {
				break
			}
			if err = run(tr.p, w); err != nil {
				break
			}
		}
		for _, problem := range checkTransform(st, before, w, err, true, false) {
			t.Errorf("seed %d: %s", seed, problem)
		}
	}
}

type viewSnapshot struct {
	entries   []agentstate.Entry
	protected []bool
	// recent are the ids of the recency window but the running task's
	// history (policies.TaskHistory), joined[k] whether recent[k] came
	// right after recent[k-1].
	recent []string
	joined []bool
}

func snapshotView(w *policies.Work) viewSnapshot {
	s := viewSnapshot{entries: append([]agentstate.Entry(nil), w.Entries...), protected: policies.Protection(w)}
	history := policies.TaskHistory(w.Entries, w.RecentTurns())
	prev := -1
	for i := policies.RecentStart(w.Entries, w.RecentTurns()); i < len(w.Entries); i++ {
		if history.Contains(i) {
			continue
		}
		s.recent = append(s.recent, w.Entries[i].Message.ID)
		s.joined = append(s.joined, prev >= 0 && prev == i-1)
		prev = i
	}
	return s
}

// checkTransform lists broken promises; fits says whether the transform must
// reach the target (the truncate fallback), single whether one transform ran
// (an IrreducibleError must then leave the view as it was).
func checkTransform(st *agentstate.State, before viewSnapshot, w *policies.Work, err error, fits, single bool) []string {
	var out []string
	var irr *agentstate.IrreducibleError
	if err != nil && !errors.As(err, &irr) {
		return []string{fmt.Sprintf("unexpected error %v", err)}
	}
	out = append(out, statetest.Check(w)...)
	for _, problem := range statetest.CheckPreserved(st, w) {
		// Over the hard window the running execution may be compacted too (policies.Protection).
		if w.HardLimitExceeded() && strings.HasSuffix(problem, "of the running execution is changed") {
			continue
		}
		out = append(out, problem)
	}
	after := make(map[string]*agentstate.Message, len(w.Entries))
	position := make(map[string]int, len(w.Entries))
	for i := range w.Entries {
		after[w.Entries[i].Message.ID] = &w.Entries[i].Message
		position[w.Entries[i].Message.ID] = i
	}
	protectedTokens := 0
	for i, e := range before.entries {
		if !before.protected[i] {
			continue
		}
		protectedTokens += e.Tokens
		// Over the hard window a protected tool output may be cut to fit,
		// nothing else about it changed (policies.ShrunkFrom).
		if got, ok := after[e.Message.ID]; !ok || !reflect.DeepEqual(*got, e.Message) && !(w.HardLimitExceeded() && policies.ShrunkFrom(got, &e.Message)) {
			out = append(out, fmt.Sprintf("protected %s not kept verbatim", e.Message.ID))
		}
	}
	for k := 1; k < len(before.recent); k++ {
		if before.joined[k] && position[before.recent[k]] != position[before.recent[k-1]]+1 {
			out = append(out, fmt.Sprintf("recent turns not contiguous at %s", before.recent[k]))
			break
		}
	}
	preamble := w.SystemTokens + w.ToolTokens
	switch {
	case irr != nil:
		// The note naming dropped failures may be what does not fit.
		if preamble+protectedTokens <= w.HardLimit() && !strings.Contains(irr.Detail, "failed calls that must stay visible") {
			out = append(out, fmt.Sprintf("IrreducibleError although protected entries need %d of %d", preamble+protectedTokens, w.HardLimit()))
		}
		if single && len(w.Entries) != len(before.entries) {
			out = append(out, "IrreducibleError after changing the view")
		}
	case fits:
		// Unresolved failures the fallback had to drop stay visible in its
		// note, which then costs its size on top of what is protected.
		// Summaries are kept over a target as long as the window is met.
		floor := preamble + protectedTokens
		for _, e := range w.Entries {
			if e.Message.Kind == agentstate.KindSummary {
				floor += e.Tokens
			}
		}
		if floor > w.HardLimit() && w.AtEnd() {
			floor = preamble + protectedTokens
			for _, e := range w.Entries {
				if e.Message.Kind == agentstate.KindSummary && strings.Contains(e.Message.Text(), "left out by ctxc to fit the window") {
					floor += e.Tokens
				}
			}
		}
		if used := w.UsedTokens(); used > max(w.CompactionTarget(), floor) {
			out = append(out, fmt.Sprintf("used %d over target %d (protected %d)", used, w.CompactionTarget(), floor))
		}
	}
	// Summaries cover exactly the shown log messages they removed (and what
	// earlier summaries they absorbed covered).
	shownBefore := map[string]bool{}
	for _, e := range before.entries {
		shownBefore[e.SourceID] = true
	}
	shownAfter := map[string]bool{}
	for _, e := range w.Entries {
		shownAfter[e.SourceID] = true
	}
	for _, s := range w.Appended {
		if _, ok := after[s.ID]; !ok || s.Kind != agentstate.KindSummary {
			out = append(out, fmt.Sprintf("appended %s is not a summary in the view", s.ID))
		}
		for _, id := range s.CoversMessageIDs {
			if shownAfter[id] {
				out = append(out, fmt.Sprintf("summary %s covers %s, which is still shown", s.ID, id))
			}
		}
	}
	covered := map[string]bool{}
	for _, s := range w.Appended {
		for _, id := range s.CoversMessageIDs {
			covered[id] = true
		}
	}
	for id := range shownBefore {
		if id != "" && !shownAfter[id] && disposed(w, id) == policies.DispositionSummarized && !covered[id] {
			out = append(out, fmt.Sprintf("%s summarized but not covered by any summary", id))
		}
	}
	return out
}

// FuzzTransforms feeds every transform arbitrary (often broken) states: none
// may panic.
func FuzzTransforms(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("user assistant tool summary pinned mask"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	for seed := 0; seed < 8; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		b := make([]byte, 64+r.Intn(256))
		r.Read(b)
		f.Add(b)
	}
	policiesUnderTest := aggressive(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		st := statetest.FromBytes(data)
		for _, tr := range policiesUnderTest {
			w, ctl := statetest.WorkControl(st, statetest.RecentTurns(len(data)%3))
			used := w.UsedTokens()
			ctl.SetCompactionTarget(used / 2)
			ctl.SetHardLimit(used * 3 / 4)
			ctl.SetHardLimitExceeded(len(data)%2 == 0)
			_ = run(tr.p, w)
		}
	})
}

// disposed is what became of the log message id, unspecified when nothing is recorded.
func disposed(w *policies.Work, id string) policies.Disposition {
	d, _ := w.Disposition(id)
	return d.Disposition
}

package tokens

import (
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// TestParallelCountingEqualsSequential: a log long enough to be split across
// goroutines gets exactly the counts one goroutine gives, cold (nothing
// cached: a fresh service for each) and warm, and entries already counted
// are left as they are. Run with -race, it also shows no entry is shared.
func TestParallelCountingEqualsSequential(t *testing.T) {
	opts := statetest.DefaultOptions()
	opts.Turns, opts.LargeOutputProb = 40, 0.5
	st := statetest.Generate(rand.New(rand.NewSource(11)), opts)
	entries := func() []agentstate.Entry {
		e := agentstate.EntriesFromLog(st.Context.Messages)
		for i := 0; i < len(e); i += 7 {
			e[i].Tokens, e[i].Counted = -1, true // counted before: must not be touched
		}
		return e
	}
	counts := func(workers int) []agentstate.Entry {
		c := freshGPT4oCounter(t)
		e := entries()
		CountEntries(c, e, workers)
		warm := entries()
		CountEntries(c, warm, workers)
		if diff := cmp.Diff(e, warm); diff != "" {
			t.Fatalf("%d workers: warm counts differ from cold (-cold +warm):\n%s", workers, diff)
		}
		return e
	}
	total := 0
	for i := range st.Context.Messages {
		total += contentBytes(&st.Context.Messages[i])
	}
	if total < 4*minBytesPerWorker {
		t.Fatalf("the log holds %d bytes, too little to be split four ways", total)
	}
	one := counts(1)
	for _, e := range one {
		if !e.Counted || e.Tokens == 0 {
			t.Fatalf("entry %s not counted: %+v", e.Message.ID, e)
		}
	}
	if diff := cmp.Diff(one, counts(4)); diff != "" {
		t.Errorf("4 workers count differently from 1 (-one +four):\n%s", diff)
	}
}

// TestPartlyCachedLogCountsAsCold: a log whose older messages are cached and
// whose newer ones (and a few edited ones) are not gets, from the hits looked
// up first and the misses tokenized after, exactly the counts a service with
// nothing cached gives.
func TestPartlyCachedLogCountsAsCold(t *testing.T) {
	opts := statetest.DefaultOptions()
	opts.Turns, opts.LargeOutputProb = 40, 0.5
	st := statetest.Generate(rand.New(rand.NewSource(12)), opts)
	half := len(st.Context.Messages) / 2
	warm := freshGPT4oCounter(t)
	CountEntries(warm, agentstate.EntriesFromLog(st.Context.Messages[:half]), 4)

	log := append([]agentstate.Message(nil), st.Context.Messages...)
	edited := 0
	for i := 0; i < half; i += 5 {
		if log[i].Mask != nil || log[i].Parts[0].Kind != agentstate.PartText {
			continue
		}
		log[i].Parts = append([]agentstate.Part{agentstate.TextPart(log[i].Parts[0].Text + " (edited)")}, log[i].Parts[1:]...)
		edited++
	}
	if edited == 0 {
		t.Fatal("no message of the cached half was edited")
	}
	got := agentstate.EntriesFromLog(log)
	CountEntries(warm, got, 4)
	want := agentstate.EntriesFromLog(log)
	CountEntries(freshGPT4oCounter(t), want, 1)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("partly cached counts differ from cold ones (-cold +partly cached):\n%s", diff)
	}
}

// freshGPT4oCounter is gpt-4o's counter on a new service: nothing cached.
func freshGPT4oCounter(tb testing.TB) *counter {
	tb.Helper()
	s, err := NewService(DefaultServiceConfig())
	if err != nil {
		tb.Fatal(err)
	}
	_, c, err := s.Resolve(agentstate.ModelSpec{Name: "gpt-4o"})
	if err != nil {
		tb.Fatal(err)
	}
	return c.(*counter)
}

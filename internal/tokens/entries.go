package tokens

import (
	"sync"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// minBytesPerWorker is the least content a counting goroutine is given: below
// it starting one costs more than it saves.
const minBytesPerWorker = 64 << 10

// CountEntries counts, with c, every entry whose Counted is false, setting
// Tokens, Provenance and Counted; entries already counted are left alone.
// Cached counts are taken first, on this goroutine; what is left to
// tokenize, when there is enough of it, is split into runs of about equal
// content counted in parallel by up to workers goroutines: tokenizing is the
// dominant cost of a cold compile, and each entry is written by exactly one
// goroutine. TokenCounters are safe for concurrent use.
func CountEntries(c agentstate.TokenCounter, entries []agentstate.Entry, workers int) {
	if cc, ok := c.(cachedCounter); ok {
		cc.CountCached(entries)
	}
	total := 0
	for i := range entries {
		if !entries[i].Counted {
			total += contentBytes(&entries[i].Message)
		}
	}
	workers = min(workers, total/minBytesPerWorker)
	if workers <= 1 {
		countRun(c, entries)
		return
	}
	var wg sync.WaitGroup
	share, start, acc := total/workers, 0, 0
	for i := range entries {
		if !entries[i].Counted {
			acc += contentBytes(&entries[i].Message)
		}
		if acc >= share || i == len(entries)-1 {
			run := entries[start : i+1]
			wg.Go(func() { countRun(c, run) })
			start, acc = i+1, 0
		}
	}
	wg.Wait()
}

// cachedCounter counts, without tokenizing, the entries whose counts it has
// cached.
type cachedCounter interface {
	CountCached(entries []agentstate.Entry)
}

func countRun(c agentstate.TokenCounter, entries []agentstate.Entry) {
	for i := range entries {
		e := &entries[i]
		if e.Counted {
			continue
		}
		e.Tokens, e.Provenance = c.CountMessage(&e.Message)
		e.Counted = true
	}
}

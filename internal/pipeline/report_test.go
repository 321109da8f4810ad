package pipeline

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// TestShownEntriesFindsTheFirstShowingEntry: over views made from a log by
// dropping, reordering, duplicating and inserting entries (summaries have no
// SourceID), finding each log message in log order gives the index of the
// first entry that shows it, as a scan of the whole view would.
func TestShownEntriesFindsTheFirstShowingEntry(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for run := range 2000 {
		n := r.IntN(30)
		var entries []agentstate.Entry
		for i := range n {
			switch k := r.IntN(10); {
			case k == 0: // dropped
			case k == 1: // a summary or other entry of no log message
				entries = append(entries, agentstate.Entry{})
				entries = append(entries, agentstate.Entry{SourceID: "m" + strconv.Itoa(i)})
			case k == 2: // shown twice
				entries = append(entries, agentstate.Entry{SourceID: "m" + strconv.Itoa(i)}, agentstate.Entry{SourceID: "m" + strconv.Itoa(i)})
			default:
				entries = append(entries, agentstate.Entry{SourceID: "m" + strconv.Itoa(i)})
			}
		}
		if run%3 == 0 && len(entries) > 1 { // a view that reordered
			i, j := r.IntN(len(entries)), r.IntN(len(entries))
			entries[i], entries[j] = entries[j], entries[i]
		}
		shown := shownEntries{entries: entries}
		for i := range n {
			id := "m" + strconv.Itoa(i)
			want, wantOK := -1, false
			for k := range entries {
				if entries[k].SourceID == id {
					want, wantOK = k, true
					break
				}
			}
			got, ok := shown.find(id)
			if ok != wantOK || (ok && got != want) {
				t.Fatalf("run %d: find(%s) = %d, %v; want %d, %v (view %v)", run, id, got, ok, want, wantOK, entries)
			}
		}
	}
}

package llmsummary_test

import (
	"math/rand"

	"github.com/contextcompiler/ctxc/internal/statetest"
)

func newRand() *rand.Rand { return rand.New(rand.NewSource(7)) }

// largeOptions makes a long, finished session with large tool outputs.
func largeOptions() statetest.Options {
	o := statetest.DefaultOptions()
	o.Turns, o.RunningProb, o.LargeOutputProb, o.SummaryProb, o.Damage = 12, 0, 0.5, 0, 0
	return o
}

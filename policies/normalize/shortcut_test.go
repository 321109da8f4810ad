package normalize

import (
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// TestShortcutChangesNothing: skipping the tool-unit rebuild for well-formed
// views gives exactly what the full rebuild gives, on valid and damaged states.
func TestShortcutChangesNothing(t *testing.T) {
	shortcuts, rebuilds := 0, 0
	for seed := range 400 {
		r := rand.New(rand.NewSource(int64(seed)))
		opts := statetest.DefaultOptions()
		opts.Damage = []float64{0, 0, 0.05, 0.2}[seed%4]
		st := statetest.Generate(r, opts)
		full, short := statetest.Work(st), statetest.Work(st)
		if w := statetest.Work(st); toolUnitsWellFormed(w.Entries, runningExecution(w.State())) {
			shortcuts++
		} else {
			rebuilds++
		}
		runPasses(full, &Config{}, TypeNormalize, false)
		runPasses(short, &Config{}, TypeNormalize, true)
		if diff := cmp.Diff(full, short, cmpopts.IgnoreUnexported(policies.Work{}), cmp.Comparer(func(a, b agentstate.TokenCounter) bool { return true })); diff != "" {
			t.Fatalf("seed %d: shortcut differs (-full +shortcut):\n%s", seed, diff)
		}
		if diff := cmp.Diff(full.Dispositions(), short.Dispositions()); diff != "" {
			t.Fatalf("seed %d: shortcut's dispositions differ (-full +shortcut):\n%s", seed, diff)
		}
		if diff := cmp.Diff(full.Report(), short.Report()); diff != "" {
			t.Fatalf("seed %d: shortcut's repairs or warnings differ (-full +shortcut):\n%s", seed, diff)
		}
	}
	if shortcuts == 0 || rebuilds == 0 {
		t.Fatalf("%d states took the shortcut, %d the rebuild: the test needs both", shortcuts, rebuilds)
	}
	t.Logf("%d shortcuts, %d rebuilds", shortcuts, rebuilds)
}

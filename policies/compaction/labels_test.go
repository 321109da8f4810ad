package compaction

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// goldenInput is the first line of a golden file: the policy and its input.
var goldenInput = regexp.MustCompile(`^# \S+ on (\S+\.json):`)

// goldenSummary is a summary in a golden file's view, and its label.
var (
	goldenSummary = regexp.MustCompile(`^(\S+) \S+/summary covers=(\S+)`)
	goldenLabel   = regexp.MustCompile(`^    text "Summary of (\d+) earlier messages(?: \((\S+) to (\S+)\))?`)
)

// coveredLabel is what a summary's label says it stands for.
type coveredLabel struct {
	Count       int
	First, Last string
}

// TestGoldenSummaryLabels checks the label of every summary the goldens
// show compaction writing: it counts the messages the summary covers and
// names the first and the last of them, as the golden's input orders them
// (a summary of the input stands at its place for the messages it covers;
// the summaries it merges are not counted).
func TestGoldenSummaryLabels(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range goldens {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		in := goldenInput.FindStringSubmatch(lines[0])
		if in == nil {
			t.Fatalf("%s: the first line %q does not name the input", path, lines[0])
		}
		st := statetest.LoadJSON(t, filepath.Join("testdata", in[1]))
		// The input's messages in order, each summary in place of what it covers.
		order, inputSummaries, inInput := map[string]int{}, map[string]bool{}, map[string]bool{}
		for _, m := range st.Context.Messages {
			inInput[m.ID] = true
			if m.Kind == agentstate.KindSummary {
				inputSummaries[m.ID] = true
				for _, id := range m.CoversMessageIDs {
					order[id] = len(order)
				}
				continue
			}
			order[m.ID] = len(order)
		}
		for i, line := range lines {
			s := goldenSummary.FindStringSubmatch(line)
			if s == nil || inInput[s[1]] {
				continue // not a summary, or the input's own
			}
			checked++
			var want coveredLabel
			for _, id := range strings.Split(s[2], ",") {
				if inputSummaries[id] {
					continue
				}
				at, ok := order[id]
				if !ok {
					t.Errorf("%s: %s covers %s, which the input does not hold", path, s[1], id)
					continue
				}
				if want.Count == 0 || at < order[want.First] {
					want.First = id
				}
				if want.Count == 0 || at > order[want.Last] {
					want.Last = id
				}
				want.Count++
			}
			l := goldenLabel.FindStringSubmatch(lines[min(i+1, len(lines)-1)])
			if l == nil {
				t.Errorf("%s: summary %s has no label: %q", path, s[1], lines[min(i+1, len(lines)-1)])
				continue
			}
			n, _ := strconv.Atoi(l[1])
			if diff := cmp.Diff(want, coveredLabel{Count: n, First: l[2], Last: l[3]}); diff != "" {
				t.Errorf("%s: the label of %s (covers=%s) does not say what it covers (-covers +label):\n%s", path, s[1], s[2], diff)
			}
		}
	}
	// The goldens hold a summary of a span, and one that merges another.
	if checked < 2 {
		t.Fatalf("found %d summaries written by compaction in %d goldens, want at least 2", checked, len(goldens))
	}
}

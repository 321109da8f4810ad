package corpus

import (
	"strings"
	"testing"
)

// TestRecordedCasesAreWellFormed loads every case: each has its output, a
// complete meta, and labels that are whole lines of what was printed.
func TestRecordedCasesAreWellFormed(t *testing.T) {
	cases, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no recorded cases")
	}
	families := map[string]int{}
	for _, c := range cases {
		families[c.Meta.Family]++
	}
	t.Logf("%d cases: %v", len(cases), families)
}

func TestCheckNamesWhatIsWrong(t *testing.T) {
	c := Case{ID: "go/x", Meta: Meta{Family: "c", Tool: "go", Version: "go1.26", Command: "go build", ExitCode: 1, Description: "d",
		Identifying: []string{"not printed"}}, Output: "main.go:3:2: undefined: x\n"}
	err := c.check()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"family", "failed: false", `identifying[0]: "not printed"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestConversationIsWellFormed(t *testing.T) {
	c, err := LoadConversation()
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"constraints": len(c.Constraints), "decisions": len(c.Decisions), "notes": len(c.Notes), "chatter": len(c.Chatter), "requests": len(c.Requests)} {
		if n < 100 {
			t.Errorf("%s: %d phrases, want at least 100", name, n)
		}
	}
}

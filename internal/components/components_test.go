package components_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/components"
	"github.com/contextcompiler/ctxc/policies"
)

// stageRow is what a row of docs/ARCHITECTURE.md's stage table says of a
// stage, or what the code says it should.
type stageRow struct {
	N        int
	Stage    string
	Policies []string
	ReadOnly bool
	Needs    []string
}

// TestArchitectureStageTable: the stage table of docs/ARCHITECTURE.md
// ("Stages") has one row per row of policies.Stages(), in its order, with
// its name, its policies (those Factories registers for the stage, in their
// order), "Read-only" for the read-only stages and "Needs a and b." naming
// exactly the stages it needs.
func TestArchitectureStageTable(t *testing.T) {
	const path = "../../docs/ARCHITECTURE.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := docStageRows(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	byStage := map[policies.Stage][]string{}
	for _, f := range components.Factories(components.Deps{}) {
		byStage[f.Stage()] = append(byStage[f.Stage()], f.Type())
	}
	var want []stageRow
	for i, st := range policies.Stages() {
		var needs []string
		for _, n := range st.Needs {
			needs = append(needs, n.String())
		}
		want = append(want, stageRow{N: i + 1, Stage: st.Name, Policies: byStage[st.Stage], ReadOnly: st.ReadOnly, Needs: needs})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: the stage table differs from policies.Stages() and components.Factories (-code +doc):\n%s", path, diff)
	}
}

// TestFactoriesFollowTheStageOrder: Factories lists the policies by stage in
// stage order, every stage having at least one.
func TestFactoriesFollowTheStageOrder(t *testing.T) {
	var last policies.Stage
	has := map[policies.Stage]bool{}
	for _, f := range components.Factories(components.Deps{}) {
		if f.Stage() < last {
			t.Errorf("%s (stage %s) is listed after a %s policy", f.Type(), f.Stage(), last)
		}
		last = f.Stage()
		has[last] = true
	}
	for _, st := range policies.Stages() {
		if !has[st.Stage] {
			t.Errorf("no policy fills stage %s", st.Name)
		}
	}
}

var (
	needsSentence = regexp.MustCompile(`\bNeeds ([a-z0-9_, ]+?)\.`)
	needsSplit    = regexp.MustCompile(`, | and `)
	policyName    = regexp.MustCompile("`([a-z0-9_]+)`")
)

// docStageRows reads the table of the document's "## Stages" section.
func docStageRows(doc string) ([]stageRow, error) {
	_, section, ok := strings.Cut(doc, "\n## Stages\n")
	if !ok {
		return nil, errors.New(`no "## Stages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []stageRow
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("stage table row %q: want four cells", line)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		n, err := strconv.Atoi(cells[0])
		if err != nil {
			if cells[0] == "#" {
				continue // the header
			}
			return nil, fmt.Errorf("stage table row %q: %w", line, err)
		}
		row := stageRow{N: n, Stage: cells[1], ReadOnly: strings.HasPrefix(cells[3], "Read-only")}
		for _, m := range policyName.FindAllStringSubmatch(cells[2], -1) {
			row.Policies = append(row.Policies, m[1])
		}
		if m := needsSentence.FindStringSubmatch(cells[3]); m != nil {
			row.Needs = needsSplit.Split(m[1], -1)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, errors.New(`no table in the "## Stages" section`)
	}
	return rows, nil
}

package policies_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
)

// TestStageTable: the rows are in the order of the Stage constants (Info
// finds a row by its constant, the catalog orders steps by it), the names are
// ids, and each column the catalog and the runner take from a single row is
// set on exactly one.
func TestStageTable(t *testing.T) {
	rows := policies.Stages()
	if len(rows) == 0 {
		t.Fatal("the stage table is empty")
	}
	id := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	seen := map[string]bool{}
	for i, row := range rows {
		if want := policies.Stage(i + 1); row.Stage != want {
			t.Errorf("row %d (%s) is stage %d, want %d: rows follow the constants' order", i, row.Name, row.Stage, want)
		}
		if diff := cmp.Diff(row, row.Stage.Info()); diff != "" {
			t.Errorf("%s.Info() is not its row (-row +Info):\n%s", row.Name, diff)
		}
		if !id.MatchString(row.Name) || seen[row.Name] {
			t.Errorf("row %d: name %q is not a new lower_snake_case id", i, row.Name)
		}
		seen[row.Name] = true
		needed := map[policies.Stage]bool{}
		for _, n := range row.Needs {
			if n >= row.Stage || n < 1 || needed[n] {
				t.Errorf("%s needs %s: a need is an earlier stage, named once", row.Name, n)
			}
			needed[n] = true
		}
		if row.Doc == "" {
			t.Errorf("%s: Doc is empty", row.Name)
		}
	}
	if !rows[0].First {
		t.Errorf("the first row (%s) is not First: the first policy's stage must also be first in the order", rows[0].Name)
	}
	for _, col := range []struct {
		name string
		set  func(policies.StageInfo) bool
	}{
		{"First", func(s policies.StageInfo) bool { return s.First }},
		{"Measures", func(s policies.StageInfo) bool { return s.Measures }},
		{"Decides", func(s policies.StageInfo) bool { return s.Decides }},
		{"Places", func(s policies.StageInfo) bool { return s.Places }},
	} {
		var on []string
		for _, row := range rows {
			if col.set(row) {
				on = append(on, row.Name)
			}
		}
		if len(on) != 1 {
			t.Errorf("%s is set on %v, want exactly one row", col.name, on)
		}
	}
}

// TestProtoListsTheStages: StageReport.stage's comment in the API lists the
// stage table's names, in its order.
func TestProtoListsTheStages(t *testing.T) {
	const path = "../proto/ctxc/v1/compiler_service.proto"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\nmessage StageReport \{\n.*?// Stage kind: ([^\n]*)\.\n\s*string stage = 1;`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s: no \"// Stage kind: a, b, ….\" comment above StageReport's `string stage = 1;`", path)
	}
	if diff := cmp.Diff(stageNames(), strings.Split(string(m[1]), ", ")); diff != "" {
		t.Errorf("%s: StageReport.stage lists other stages than the stage table (-table +proto):\n%s", path, diff)
	}
}

func stageNames() []string {
	var names []string
	for _, row := range policies.Stages() {
		names = append(names, row.Name)
	}
	return names
}

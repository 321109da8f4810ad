package yamlkeys

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

type limits struct {
	MaxCalls int `yaml:"max_calls"`
}

type step struct {
	Policy   string    `yaml:"policy"`
	Settings yaml.Node `yaml:"settings"` // decoded later, by the policy
}

type extra struct {
	Name  string         `yaml:"name"`
	Other map[string]int `yaml:",inline"`
}

type file struct {
	Listen  string        `yaml:"listen"`
	Timeout time.Duration `yaml:"timeout"`
	limits  `yaml:",inline"`
	Steps   []step          `yaml:"steps"`
	Extra   extra           `yaml:"extra"`
	Named   map[string]step `yaml:"named"`
	Ignored string          `yaml:"-"`
	Plain   string
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // the problems, in order; none when it decodes
	}{
		{name: "empty", doc: ""},
		{name: "every kind of key it has", doc: "listen: x\ntimeout: 5s\nmax_calls: 3\nsteps:\n  - policy: p\n    settings: {anything: 1}\nextra: {name: n, more: 2}\nnamed: {a: {policy: q}}\nplain: y\n"},
		{name: "merge keys", doc: "base: &b {policy: p}\nnamed:\n  a:\n    <<: *b\n", want: []string{
			`line 1: unknown key "base" at the top level; its keys: listen, timeout, max_calls, steps, extra, named, plain`}},
		{name: "an inline struct's key, misspelt", doc: "max_cals: 3\n", want: []string{
			`line 1: unknown key "max_cals" at the top level; did you mean "max_calls"?`}},
		{name: "a key of the file that yaml:\"-\" hides", doc: "ignored: x\n", want: []string{
			`line 1: unknown key "ignored" at the top level; its keys: listen, timeout, max_calls, steps, extra, named, plain`}},
		{name: "in a list and a map", doc: "steps:\n  - policy: p\n  - polcy: q\nnamed:\n  a: {policy: r, setings: {}}\n", want: []string{
			`line 3: unknown key "polcy" in section "steps[1]"; did you mean "policy"?`,
			`line 5: unknown key "setings" in section "named.a"; did you mean "settings"?`}},
		{name: "values of the wrong kind", doc: "listen: [a]\ntimeout: soon\nmax_calls: many\nsteps: {policy: p}\n", want: []string{
			`line 1: listen: a list is not a string`,
			`line 2: timeout: "soon" is not a duration (such as 30s, 5m or 1h30m)`,
			`line 3: max_calls: "many" is not a whole number`,
			`line 4: steps: a mapping is not a list`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.doc), &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := Decode(&doc, &file{}, ""); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

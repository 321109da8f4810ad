package compiler

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestExpandTemplate(t *testing.T) {
	vars := map[string]string{"role": "a travel assistant", "user.name": "Ada", "n": "{{role}}"}
	tests := []struct {
		name, prompt, want string
	}{
		{"no placeholders", "plain", "plain"},
		{"plain and spaced", "You are {{role}}. Hi {{ user.name }}!", "You are a travel assistant. Hi Ada!"},
		{"values are not expanded again", "x={{n}}", "x={{role}}"},
		{"escaped braces", "Write {{{{role}} literally", "Write {{role}} literally"},
		{"not a placeholder stays", `JSON: {{"a": 1}} and {{ }} and {{1x}} and }}`, `JSON: {{"a": 1}} and {{ }} and {{1x}} and }}`},
		{"unclosed", "{{role", "{{role"},
		{"triple brace", "{{{role}}}", "{{{role}}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandTemplate(tt.prompt, vars, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExpandTemplateMissing(t *testing.T) {
	_, err := ExpandTemplate("{{city}} in {{ country }}, {{city}} again, {{role}}", map[string]string{"role": "x"}, 1<<20)
	var inv *agentstate.InvalidArgumentError
	if !errors.As(err, &inv) || inv.Reason != ReasonTemplateVariableMissing {
		t.Fatalf("err = %#v", err)
	}
	want := []agentstate.FieldViolation{
		{Field: `options.template_variables["city"]`, Description: `the system prompt uses {{city}} but no value is given for "city"`},
		{Field: `options.template_variables["country"]`, Description: `the system prompt uses {{country}} but no value is given for "country"`},
	}
	if diff := cmp.Diff(want, inv.Violations); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestExpandTemplatePathological runs inputs that would be quadratic for a
// naive rescanning expander; it asserts results, never times.
func TestExpandTemplatePathological(t *testing.T) {
	const n = 1 << 20
	for _, in := range []string{
		strings.Repeat("{", n),
		strings.Repeat("{{ ", n/3),
		"{{" + strings.Repeat(" ", n) + "x",
		"{{" + strings.Repeat("a", n),
		strings.Repeat("{{a", n/3),
	} {
		got, err := ExpandTemplate(in, nil, len(in))
		if err != nil || got != strings.ReplaceAll(in, "{{{{", "{{") {
			t.Errorf("input of %d bytes: changed or failed (%v)", len(in), err)
		}
	}
}

// TestExpandTemplateAmplification: a 1.2 MB prompt of 200,000 placeholders
// with a 100 KB value would expand to 20 GB. The size is refused from the
// first pass, before anything is built (building it would end the test
// process), and a result exactly at the limit is still expanded.
func TestExpandTemplateAmplification(t *testing.T) {
	prompt := strings.Repeat("{{a}}", 200_000)
	_, err := ExpandTemplate(prompt, map[string]string{"a": strings.Repeat("x", 100_000)}, 32<<20)
	var limit *agentstate.LimitError
	if !errors.As(err, &limit) {
		t.Fatalf("err = %v, want a *agentstate.LimitError", err)
	}
	if limit.Got != 200_000*100_000 || limit.Limit != 32<<20 || !strings.HasPrefix(limit.Field, "options.template_variables") {
		t.Errorf("limit error = %+v", limit)
	}

	got, err := ExpandTemplate("ab{{a}}cd", map[string]string{"a": "xyz"}, 7)
	if err != nil || got != "abxyzcd" {
		t.Errorf("at the limit: got %q, %v", got, err)
	}
	if _, err := ExpandTemplate("ab{{a}}cd", map[string]string{"a": "xyz"}, 6); !errors.As(err, &limit) || limit.Got != 7 {
		t.Errorf("one byte over: err = %v", err)
	}
}

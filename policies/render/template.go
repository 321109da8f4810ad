package render

import (
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
)

// ExpandTemplate replaces the {{name}} placeholders of a system prompt with
// vars[name] (seed 004's prompt templates), in one pass, linear in the input:
//
//   - A placeholder is "{{", optional spaces, a name, optional spaces, "}}".
//     A name is a letter or "_" followed by letters, digits, "_", "." or "-".
//   - "{{{{" is a literal "{{"; "}}" outside a placeholder is literal.
//   - A "{{" that does not open a well-formed placeholder (as in a JSON
//     example "{{\"a\": 1}}") is kept as it is.
//   - Values are inserted verbatim and never expanded again.
//
// Placeholders without a value give one *policies.InvalidArgumentError with
// Reason ReasonTemplateVariableMissing and a violation per missing name, in
// order of first use, on the field options.template_variables["name"].
func ExpandTemplate(prompt string, vars map[string]string) (string, error) {
	if !strings.Contains(prompt, "{{") {
		return prompt, nil
	}
	var b strings.Builder
	b.Grow(len(prompt))
	var missing []string
	seen := make(map[string]bool)
	for rest := prompt; ; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		if strings.HasPrefix(rest, "{{{{") {
			b.WriteString("{{")
			rest = rest[4:]
			continue
		}
		name, n := placeholder(rest)
		if n == 0 {
			b.WriteString("{{")
			rest = rest[2:]
			continue
		}
		if v, ok := vars[name]; ok {
			b.WriteString(v)
		} else if !seen[name] {
			seen[name] = true
			missing = append(missing, name)
		}
		rest = rest[n:]
	}
	if len(missing) > 0 {
		violations := make([]policies.FieldViolation, len(missing))
		for i, name := range missing {
			violations[i] = policies.FieldViolation{
				Field:       fmt.Sprintf("options.template_variables[%q]", name),
				Description: fmt.Sprintf("the system prompt uses {{%s}} but no value is given for %q", name, name),
			}
		}
		return "", &policies.InvalidArgumentError{Reason: ReasonTemplateVariableMissing, Violations: violations,
			Metadata: map[string]string{"variables": strings.Join(missing, ",")}}
	}
	return b.String(), nil
}

// placeholder reads "{{ name }}" at the start of s and returns the name and
// the placeholder's length, or 0 when s does not start with one. It stops at
// the first byte that cannot continue a placeholder, so a failed attempt costs
// no more than the bytes it skips.
func placeholder(s string) (string, int) {
	i := 2
	for i < len(s) && s[i] == ' ' {
		i++
	}
	start := i
	for i < len(s) && nameByte(s[i], i == start) {
		i++
	}
	name := s[start:i]
	if name == "" {
		return "", 0
	}
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if !strings.HasPrefix(s[i:], "}}") {
		return "", 0
	}
	return name, i + 2
}

func nameByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case c >= '0' && c <= '9', c == '.', c == '-':
		return !first
	}
	return false
}

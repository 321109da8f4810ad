package compiler

import (
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// ReasonTemplateVariableMissing is a {{name}} placeholder without a value.
const ReasonTemplateVariableMissing = "TEMPLATE_VARIABLE_MISSING"

// ExpandTemplate replaces the {{name}} placeholders of a system prompt with
// vars[name], linear in the input:
//
//   - A placeholder is "{{", optional spaces, a name, optional spaces, "}}".
//     A name is a letter or "_" followed by letters, digits, "_", "." or "-".
//   - "{{{{" is a literal "{{"; "}}" outside a placeholder is literal.
//   - A "{{" that does not open a well-formed placeholder (as in a JSON
//     example "{{\"a\": 1}}") is kept as it is.
//   - Values are inserted verbatim and never expanded again.
//
// Placeholders without a value give one *agentstate.InvalidArgumentError with
// Reason ReasonTemplateVariableMissing and a violation per missing name, in
// order of first use, on the field options.template_variables["name"].
//
// A small prompt with many placeholders and a large value expands to many
// times its size, so the expanded size is measured in a first pass and a
// result over maxBytes is refused with a *agentstate.LimitError before anything
// is built.
func ExpandTemplate(prompt string, vars map[string]string, maxBytes int) (string, error) {
	if !strings.Contains(prompt, "{{") {
		return prompt, nil
	}
	size := 0
	var missing []string
	seen := make(map[string]bool)
	scanTemplate(prompt, func(literal string) { size += len(literal) }, func(name string) {
		if v, ok := vars[name]; ok {
			size += len(v)
		} else if !seen[name] {
			seen[name] = true
			missing = append(missing, name)
		}
	})
	if len(missing) > 0 {
		violations := make([]agentstate.FieldViolation, len(missing))
		for i, name := range missing {
			violations[i] = agentstate.FieldViolation{
				Field:       fmt.Sprintf("options.template_variables[%q]", name),
				Description: fmt.Sprintf("the system prompt uses {{%s}} but no value is given for %q", name, name),
			}
		}
		return "", &agentstate.InvalidArgumentError{Reason: ReasonTemplateVariableMissing, Violations: violations,
			Metadata: map[string]string{"variables": strings.Join(missing, ",")}}
	}
	if size > maxBytes {
		return "", &agentstate.LimitError{Field: "options.template_variables (the expanded system prompt, in bytes)", Limit: maxBytes, Got: size}
	}
	var b strings.Builder
	b.Grow(size)
	scanTemplate(prompt, func(literal string) { b.WriteString(literal) }, func(name string) { b.WriteString(vars[name]) })
	return b.String(), nil
}

// ExpandedSize is the size in bytes of prompt with its placeholders filled
// from vars (a placeholder without a value counts as nothing), measured
// without building it.
func ExpandedSize(prompt string, vars map[string]string) int {
	if !strings.Contains(prompt, "{{") {
		return len(prompt)
	}
	size := 0
	scanTemplate(prompt, func(literal string) { size += len(literal) }, func(name string) { size += len(vars[name]) })
	return size
}

// scanTemplate walks a prompt once, calling literal for the text kept as it is
// and placeholder for each well-formed placeholder's name.
func scanTemplate(prompt string, literal, placeholderName func(string)) {
	for rest := prompt; ; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			literal(rest)
			return
		}
		literal(rest[:i])
		rest = rest[i:]
		if strings.HasPrefix(rest, "{{{{") {
			literal("{{")
			rest = rest[4:]
			continue
		}
		name, n := placeholder(rest)
		if n == 0 {
			literal("{{")
			rest = rest[2:]
			continue
		}
		placeholderName(name)
		rest = rest[n:]
	}
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

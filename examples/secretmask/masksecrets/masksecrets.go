// Package masksecrets is a ctxc policy written outside ctxc's module: it
// masks secrets (cloud keys, tokens, passwords, private keys, and patterns
// of the profile's own) in the tool outputs of the context a model is sent.
// It is the example of docs/extending.md: config.go holds its settings,
// factory.go its factory, this file the policy.
package masksecrets

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// rule is a pattern compiled, with its replacement.
type rule struct {
	name        string
	re          *regexp.Regexp
	secret      int // the index of the group named secret; 0: the whole match
	replacement string
}

// masker is the policy. It holds no per-request state, so one instance
// serves concurrent compiles.
type masker struct{ rules []rule }

// newMasker builds the policy from a config that validated.
func newMasker(c *Config) (policies.Policy, error) {
	var patterns []Pattern
	for _, p := range BuiltinPatterns() {
		if slices.Contains(c.Builtin, p.Name) {
			patterns = append(patterns, p)
		}
	}
	patterns = append(patterns, c.Patterns...)
	m := masker{}
	for _, p := range patterns {
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", p.Name, err) // Validate compiled it already
		}
		m.rules = append(m.rules, rule{name: p.Name, re: re, secret: max(re.SubexpIndex("secret"), 0),
			replacement: strings.ReplaceAll(c.Replacement, "{name}", p.Name)})
	}
	return m, nil
}

// Apply masks the secrets of every tool result in the view. The log's
// messages are shared with the request and never written: a changed
// message gets parts of its own, and Touch tells the runner it changed.
// The step's report says how many secrets of which kind it masked, never
// what they were.
func (m masker) Apply(ctx context.Context, w *policies.Work) error {
	counts := map[string]int{}
	for i := range w.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		msg := &w.Entries[i].Message
		var parts []agentstate.Part // a copy, once something changes
		for j, p := range msg.Parts {
			if p.Kind != agentstate.PartToolResult {
				continue
			}
			masked, n := m.mask(p.ToolResult.Content, counts)
			if n == 0 {
				continue
			}
			if parts == nil {
				parts = slices.Clone(msg.Parts)
			}
			parts[j].ToolResult.Content = masked
		}
		if parts != nil {
			msg.Parts = parts
			w.Touch(i)
		}
	}
	if len(counts) > 0 {
		w.Note("masked " + summary(counts))
	}
	return nil
}

// mask replaces every secret in text, counting them by pattern name in
// counts, and returns the text and how many it replaced.
func (m masker) mask(text string, counts map[string]int) (string, int) {
	total := 0
	for _, r := range m.rules {
		matches := r.re.FindAllStringSubmatchIndex(text, -1)
		if len(matches) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, at := range matches {
			start, end := at[2*r.secret], at[2*r.secret+1]
			if start < 0 || start < last { // the group did not take part, or overlaps what was masked
				continue
			}
			b.WriteString(text[last:start])
			b.WriteString(r.replacement)
			last = end
			counts[r.name]++
			total++
		}
		b.WriteString(text[last:])
		text = b.String()
	}
	return text, total
}

// summary is "2 bearer_token, 1 private_key": the counts, by name.
func summary(counts map[string]int) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[name], name))
	}
	return strings.Join(parts, ", ")
}

package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/policies"
)

// bytesPerToken is the deterministic summarizer's size estimate. It has no
// counter (summarizers are model-agnostic); the policy measures the result.
const bytesPerToken = 4

// pathKeys are the argument names listed as files and resources touched.
func pathKeys() []string {
	return []string{"path", "file_path", "file", "filename", "url", "uri", "dir", "directory"}
}

// DeterministicSummarizer is the default Summarizer: it needs no model. It
// keeps user instructions verbatim within UserTextTokens, lists the tools run
// with their outcomes, the files and resources touched, the errors still open
// in the span and the decisions taken (first sentence of assistant answers),
// under section headers a person can read.
type DeterministicSummarizer struct {
	// UserTextTokens is how much user text is kept verbatim.
	UserTextTokens int
}

type toolRun struct {
	call    policies.ToolCall
	outcome string // "ok", "error: ...", "no result"
}

// Summarize implements Summarizer.
func (d DeterministicSummarizer) Summarize(_ context.Context, span []policies.Message, previous string, budgetTokens int) (string, error) {
	var users, decisions, events, resources, openErrors []string
	var runs []*toolRun
	byCall := map[string]*toolRun{}
	seenResource := map[string]bool{}
	keys := pathKeys()
	userBytes, userOmitted := d.UserTextTokens*bytesPerToken, 0
	for i := range span {
		m := &span[i]
		switch {
		case m.Kind == policies.KindEvent:
			if t := firstSentence(m.Text()); t != "" {
				events = append(events, t)
			}
		case m.Role == policies.RoleUser && m.Kind == policies.KindRegular:
			t := strings.TrimSpace(m.Text())
			if t == "" {
				continue
			}
			if len(t) > userBytes {
				kept := runePrefix(t, userBytes)
				userOmitted += len(t) - len(kept)
				t = kept
			}
			userBytes -= len(t)
			if t != "" {
				users = append(users, t)
			}
		case m.Role == policies.RoleAssistant:
			for _, p := range m.Parts {
				if p.Kind != policies.PartToolCall {
					continue
				}
				r := &toolRun{call: p.ToolCall, outcome: "no result"}
				runs = append(runs, r)
				byCall[p.ToolCall.ID] = r
				for _, v := range argValues(p.ToolCall.ArgumentsJSON, keys) {
					if !seenResource[v] {
						seenResource[v] = true
						resources = append(resources, v)
					}
				}
			}
			if !m.HasToolCalls() {
				if t := firstSentence(m.Text()); t != "" {
					decisions = append(decisions, t)
				}
			}
		case m.Role == policies.RoleTool:
			for _, p := range m.Parts {
				if p.Kind != policies.PartToolResult {
					continue
				}
				if r, ok := byCall[p.ToolResult.ToolCallID]; ok {
					r.outcome = "ok"
					if p.ToolResult.IsError {
						r.outcome = "error: " + firstSentence(p.ToolResult.Content)
					}
				}
			}
		}
	}
	// An error is open when no later run of the same tool succeeded.
	succeeded := map[string]bool{}
	for k := len(runs) - 1; k >= 0; k-- {
		r := runs[k]
		if r.outcome == "ok" {
			succeeded[r.call.Name] = true
		} else if strings.HasPrefix(r.outcome, "error") && !succeeded[r.call.Name] {
			openErrors = append(openErrors, fmt.Sprintf("%s (call %s): %s", describeCall(r.call), r.call.ID, strings.TrimPrefix(r.outcome, "error: ")))
		}
	}
	for l, r := 0, len(openErrors)-1; l < r; l, r = l+1, r-1 {
		openErrors[l], openErrors[r] = openErrors[r], openErrors[l]
	}

	tools := make([]string, len(runs))
	for k, r := range runs {
		tools[k] = describeCall(r.call) + " -> " + r.outcome
	}
	// Sections go most useful first, so a cut to the budget loses the least.
	// An earlier summary in the same layout is merged section by section, its
	// items first (seed 001's iterative summary update); any other earlier
	// summary is kept whole in its own section.
	earlier, earlierCount, merged := parseSummary(previous)
	sections := []struct {
		title string
		items []string
	}{
		{"User instructions", users},
		{"Errors still open", openErrors},
		{"Decisions", decisions},
		{"Tools run", tools},
		{"Files and resources", resources},
		{"Events", events},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Summary of %d earlier messages, written by ctxc without a model.\n", len(span)+earlierCount)
	for _, sec := range sections {
		items := sec.items
		if merged {
			items = append(earlier[sec.title], items...)
			if sec.title == "Files and resources" {
				items = unique(items)
			}
		}
		section(&b, sec.title, items)
		if sec.title == "User instructions" && userOmitted > 0 {
			fmt.Fprintf(&b, "[... about %s tokens of user text omitted]\n", formatCount((userOmitted+bytesPerToken-1)/bytesPerToken))
		}
	}
	if previous = strings.TrimSpace(previous); previous != "" && !merged {
		b.WriteString("\n## Earlier summary\n")
		b.WriteString(previous)
		b.WriteByte('\n')
	}
	return fitLines(b.String(), budgetTokens*bytesPerToken), nil
}

// parseSummary reads a summary written by DeterministicSummarizer: its items by
// section title and the message count of its header. ok is false for text in
// any other layout.
func parseSummary(text string) (items map[string][]string, count int, ok bool) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) == 0 {
		return nil, 0, false
	}
	if _, err := fmt.Sscanf(lines[0], "Summary of %d earlier messages", &count); err != nil {
		return nil, 0, false
	}
	items = map[string][]string{}
	title := ""
	for _, line := range lines[1:] {
		switch {
		case strings.HasPrefix(line, "## "):
			title = strings.TrimPrefix(line, "## ")
		case strings.HasPrefix(line, "- ") && title != "":
			items[title] = append(items[title], strings.TrimPrefix(line, "- "))
		case strings.HasPrefix(line, "  ") && len(items[title]) > 0:
			last := len(items[title]) - 1
			items[title][last] += "\n" + strings.TrimPrefix(line, "  ")
		}
	}
	return items, count, true
}

func unique(items []string) []string {
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

func section(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n", title)
	for _, it := range items {
		b.WriteString("- ")
		b.WriteString(strings.ReplaceAll(it, "\n", "\n  "))
		b.WriteByte('\n')
	}
}

// fitLines cuts s to at most limit bytes at a line end, saying how much went.
func fitLines(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := func(lines int) string {
		return fmt.Sprintf("[... %d more lines cut to fit the summary budget]\n", lines)
	}
	cut := runePrefix(s, max(limit-len(note(0))-8, 0))
	if nl := strings.LastIndexByte(cut, '\n'); nl >= 0 {
		cut = cut[:nl+1]
	} else {
		cut = ""
	}
	return cut + note(strings.Count(s[len(cut):], "\n"))
}

// describeCall shows a call as name(key=value, ...) with at most three short
// scalar arguments, by key order.
func describeCall(c policies.ToolCall) string {
	var args map[string]any
	if err := json.Unmarshal([]byte(c.ArgumentsJSON), &args); err != nil {
		if c.ArgumentsJSON == "" {
			return c.Name + "()"
		}
		return c.Name + "(" + shorten(c.ArgumentsJSON, 60) + ")"
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var shown []string
	for _, k := range keys {
		var v string
		switch x := args[k].(type) {
		case string:
			// A multi-line value is a body (file content, a patch), not a key
			// argument: its size says enough.
			if n := strings.Count(x, "\n"); n > 0 {
				v = fmt.Sprintf("<%d lines>", n+1)
			} else {
				v = shorten(x, 60)
			}
		case float64, bool:
			v = fmt.Sprint(x)
		default:
			continue
		}
		shown = append(shown, k+"="+v)
		if len(shown) == 3 {
			break
		}
	}
	return c.Name + "(" + strings.Join(shown, ", ") + ")"
}

// argValues returns the string values of the given keys in a call's arguments.
func argValues(argsJSON string, keys []string) []string {
	var args map[string]any
	if json.Unmarshal([]byte(argsJSON), &args) != nil {
		return nil
	}
	var out []string
	for _, k := range keys {
		if v, ok := args[k].(string); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// firstSentence is the text up to its first sentence end or line break, at
// most 200 runes.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	end := len(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		end = i
	}
	for _, sep := range []string{". ", "! ", "? "} {
		if i := strings.Index(s[:end], sep); i >= 0 && i+1 < end {
			end = i + 1
		}
	}
	return shorten(strings.TrimSpace(s[:end]), 200)
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…"
}

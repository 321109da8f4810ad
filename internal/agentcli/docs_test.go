package agentcli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The base URL and window of docs/agents.md's configuration by hand.
const (
	docBase   = "http://127.0.0.1:8080"
	docWindow = 32000
)

// fence is one fenced code block of a Markdown text and the prose before
// it, back to the block before.
type fence struct {
	lang, text, before string
}

// section is the text of the section under heading, to the next heading
// of its level or above.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	start := strings.Index(doc, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("docs/agents.md has no section %q", heading)
	}
	rest := doc[start+len(heading)+2:]
	level := strings.Fields(heading)[0]
	for _, l := range regexp.MustCompile(`(?m)^#+ `).FindAllStringIndex(rest, -1) {
		if marks := rest[l[0] : l[1]-1]; len(marks) <= len(level) && !insideFence(rest[:l[0]]) {
			return rest[:l[0]]
		}
	}
	return rest
}

// insideFence reports whether text ends inside a fenced block.
func insideFence(text string) bool { return strings.Count("\n"+text, "\n```")%2 == 1 }

func fences(text string) []fence {
	var out []fence
	lines := strings.Split(text, "\n")
	var prose []string
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			prose = append(prose, lines[i])
			continue
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		out = append(out, fence{lang: lang, text: strings.Join(body, "\n") + "\n", before: strings.Join(prose, "\n")})
		prose = nil
	}
	return out
}

// TestAgentsGuideShowsWhatWrapApplies keeps docs/agents.md's configuration
// by hand true: for each CLI, its section holds the `ctxc wrap` command for
// it, then Manual's blocks for the guide's base URL and window, each after
// prose naming where it goes. What Manual shows is what Configure applies
// (TestManualIsWhatConfigureApplies), and Configure is what the CLIs run
// with in integration/wrap_test.go.
func TestAgentsGuideShowsWhatWrapApplies(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	byHand := section(t, doc, "## By hand, against a running ctxc")
	if !strings.Contains(byHand, "`"+docBase+"`") || !strings.Contains(byHand, "32,000-token window") {
		t.Errorf("the configuration by hand does not say it is for a ctxc at %s and a %d-token window", docBase, docWindow)
	}
	for _, a := range Agents() {
		t.Run(a.Command, func(t *testing.T) {
			blocks := fences(section(t, "\n"+byHand, "### "+a.Name))
			if len(blocks) == 0 || blocks[0].lang != "console" || strings.TrimSpace(blocks[0].text) != "ctxc wrap --window 32000 -- "+a.Command {
				t.Errorf("the section does not start with `ctxc wrap --window %d -- %s`: %+v", docWindow, a.Command, blocks)
				return
			}
			rest := blocks[1:]
			for _, want := range a.Manual(docBase, docWindow) {
				found := false
				for len(rest) > 0 && !found {
					b := rest[0]
					rest = rest[1:]
					found = b.lang == want.Lang && b.text == want.Text
					if found {
						where := "`" + want.Where + "`"
						if want.Where == "the environment" {
							where = "environment"
						}
						if !strings.Contains(b.before, where) {
							t.Errorf("the prose before the block does not say it goes in %s:\n%s", where, b.before)
						}
					}
				}
				if !found {
					t.Errorf("the section does not show, in order, what ctxc wrap applies in %s:\n```%s\n%s```", want.Where, want.Lang, want.Text)
				}
			}
		})
	}
	// The guide's one-line command is a CLI's too.
	if m := regexp.MustCompile("(?s)## ctxc wrap\n\n```console\n(ctxc wrap [^\n]*)\n```").FindStringSubmatch(doc); m == nil {
		t.Error("## ctxc wrap does not open with a command")
	} else if _, program, ok := strings.Cut(m[1], " -- "); !ok {
		t.Errorf("the command %q does not name a CLI after --", m[1])
	} else if _, ok := Lookup(strings.Fields(program)[0]); !ok {
		t.Errorf("the command %q runs %s, not a supported CLI", m[1], program)
	}
}

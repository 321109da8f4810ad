// Package docset reads the project's documentation as one text: README.md,
// then each guide under docs/ in the order of Guides. The checks that keep
// quoted commands, tables and figures true (integration, cmd/ctxc) read it
// through here, so they follow a passage to whichever file holds it.
//
// In the text a guide's headings sit one level below the file's: its title
// (# Running it safely) reads as a README section (## Running it safely),
// its sections as subsections, as if the guides were still the README's
// sections. Lines keep their count, so every line maps back to its file.
package docset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Guides are the guides under docs/, in reading order (the README links
// them in this order).
var Guides = []string{
	"docs/api-tour.md",
	"docs/http.md",
	"docs/proxy.md",
	"docs/agents.md",
	"docs/inspector.md",
	"docs/clients.md",
	"docs/python-sidecar.md",
	"docs/llm-helpers.md",
	"docs/configuration.md",
	"docs/running-safely.md",
	"docs/deploying.md",
	"docs/releases.md",
	"docs/metrics.md",
	"docs/profiles.md",
	"docs/extending.md",
	"docs/api.md",
	"docs/measuring.md",
	"docs/performance.md",
	"docs/contributing.md",
}

// Doc is the documentation as one text.
type Doc struct {
	// Text is README.md and the guides, each ending with a newline.
	Text string
	// files and at give each line of Text (from 0) its file and line (from 1).
	files []string
	at    []int
}

// Read reads the documentation of the repository at root.
func Read(root string) (*Doc, error) {
	d := &Doc{}
	var b strings.Builder
	for _, name := range append([]string{"README.md"}, Guides...) {
		raw, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		guide := name != "README.md"
		inFence := false
		for n, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
			if strings.HasPrefix(line, "```") {
				inFence = !inFence
			}
			if guide && !inFence && strings.HasPrefix(line, "#") {
				line = "#" + line
			}
			b.WriteString(line)
			b.WriteByte('\n')
			d.files = append(d.files, name)
			d.at = append(d.at, n+1)
		}
	}
	d.Text = b.String()
	return d, nil
}

// Where names the file and line of line n of Text (from 1): "README.md:12".
func (d *Doc) Where(n int) string {
	if n < 1 || n > len(d.at) {
		return fmt.Sprintf("line %d", n)
	}
	return fmt.Sprintf("%s:%d", d.files[n-1], d.at[n-1])
}

// A guide's eval block holds what a `ctxc eval` command prints, between an
// opening and a closing marker line; cmd/ctxc's TestGuideEvalBlocks writes
// and checks it, and the integration tests leave its command to that test.
const (
	evalBegin = "<!-- ctxc eval "
	evalEnd   = "<!-- end ctxc eval "
	evalClose = " -->"
)

// EvalMarkers are the lines that open and close the eval block NAME.
func EvalMarkers(name string) (begin, end string) {
	return evalBegin + name + evalClose, evalEnd + name + evalClose
}

// EvalBegins reports whether line opens an eval block, and its name.
func EvalBegins(line string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(line, evalBegin)
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, evalClose)
}

// EvalEnds reports whether line closes an eval block.
func EvalEnds(line string) bool {
	rest, ok := strings.CutPrefix(line, evalEnd)
	return ok && strings.HasSuffix(rest, evalClose)
}

package docset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGuidesReadAsTheREADMEsSections(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# ctxc\n\n## Tour\n\ntext\n")
	for _, g := range Guides {
		write(g, "# "+g+"\n\n## Part\n\n```sh\n# a comment, not a heading\n```\n")
	}
	d, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	first := Guides[0]
	want := "# ctxc\n\n## Tour\n\ntext\n## " + first + "\n\n### Part\n\n```sh\n# a comment, not a heading\n```\n"
	if !strings.HasPrefix(d.Text, want) {
		t.Errorf("Text starts\n%q\nwant\n%q", d.Text[:min(len(d.Text), len(want))], want)
	}
	if got := d.Where(6); got != first+":1" {
		t.Errorf("Where(6) = %q, want %s:1", got, first)
	}
	if got := d.Where(8); got != first+":3" {
		t.Errorf("Where(8) = %q, want %s:3 (the guide's section heading)", got, first)
	}
}

// Every guide under docs/ is read, and the README links each, in order.
func TestEveryGuideIsReadAndLinked(t *testing.T) {
	root := filepath.Join("..", "..")
	found, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var guides []string
	for _, f := range found {
		// The architecture and its design notes are read beside the code,
		// not as the README's sections.
		if name := "docs/" + filepath.Base(f); name != "docs/ARCHITECTURE.md" && name != "docs/design.md" {
			guides = append(guides, name)
		}
	}
	sorted := slices.Sorted(slices.Values(Guides))
	if !slices.Equal(guides, sorted) {
		t.Errorf("docs/ holds %v; Guides lists %v", guides, sorted)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, g := range Guides {
		i := strings.Index(string(readme[at:]), "]("+g+")")
		if i < 0 {
			t.Errorf("README.md does not link %s after the guides before it", g)
			continue
		}
		at += i
	}
	if lines := strings.Count(string(readme), "\n"); lines > 250 {
		t.Errorf("README.md has %d lines; the guides under docs/ hold the rest (at most 250)", lines)
	}
}

func TestEvalMarkers(t *testing.T) {
	begin, end := EvalMarkers("window-sweep")
	if name, ok := EvalBegins(begin); !ok || name != "window-sweep" {
		t.Errorf("EvalBegins(%q) = %q, %v; want window-sweep, true", begin, name, ok)
	}
	if !EvalEnds(end) {
		t.Errorf("EvalEnds(%q) = false", end)
	}
	for _, line := range []string{end, "<!-- ctxc eval x", "ctxc eval x -->", "<!-- ctxc evaluation x -->", ""} {
		if name, ok := EvalBegins(line); ok {
			t.Errorf("EvalBegins(%q) = %q, true; want false", line, name)
		}
	}
	for _, line := range []string{begin, "<!-- end ctxc eval x", ""} {
		if EvalEnds(line) {
			t.Errorf("EvalEnds(%q) = true; want false", line)
		}
	}
}

// Package corpus owns the recorded tool outputs that ctxc's reading of real
// sessions is tested and measured on: what real compilers, linters, test
// runners, interpreters, package managers, shells, HTTP and gRPC clients,
// cluster tools and databases printed when they were run on small projects
// with real bugs (testdata/projects), with the lines a human reader marked as
// the ones that identify each failure.
//
// Nothing here is written to match an extractor: every output is what a tool
// printed, recorded by the scripts in record/ (one a toolchain family, each
// re-runnable: `eval/corpus/record/<family>.sh`), and the labels are written
// by reading the output, before and apart from any code that reads it.
//
// # Layout
//
// recorded/<family>/<case>.out holds a command's combined stdout and stderr,
// byte for byte; recorded/<family>/<case>.json its Meta. Both are embedded,
// so tests and session generators need no tool installed.
package corpus

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed recorded
var recorded embed.FS

// Meta describes one recorded output: how it was made and what identifies its
// failure.
type Meta struct {
	// Family is the toolchain family, the directory it is recorded under:
	// go, c, rust, typescript, javascript, python, java, php, http, grpc,
	// kubernetes, docker, terraform, sql, git, shell.
	Family string `json:"family"`
	// Tool is the program that printed it (go, gcc, clang, rustc, cargo, tsc,
	// eslint, jest, vitest, node, npm, python3, pytest, mypy, pyright, pip,
	// javac, java, mvn, gradle, php, curl, grpcurl, kubectl, docker,
	// terraform, psql, mysql, sqlite3, git, make, bash).
	Tool string `json:"tool"`
	// Version is the tool's version as it reports it.
	Version string `json:"version"`
	// Project is the directory under testdata/projects it ran in ("" for none).
	Project string `json:"project,omitempty"`
	// Command is the command line as an agent's shell tool would run it.
	Command string `json:"command"`
	// ExitCode is the command's exit status.
	ExitCode int `json:"exit_code"`
	// Failed says the output reports a failure: a non-zero exit, or an output
	// that says in its own words that something failed.
	Failed bool `json:"failed"`
	// Identifying are the lines of the output (each a whole line, trimmed of
	// surrounding white space, exactly as printed) that say what failed and
	// where: each distinct diagnostic with its location (at most the first
	// five), the exception or panic line and the innermost frame of the
	// project's own code, each failing test's name and its assertion, the
	// status or error line of a client, a database or an installer. Empty for
	// an output that did not fail.
	Identifying []string `json:"identifying,omitempty"`
	// Generic are lines of the output that say only that something failed,
	// naming nothing ("FAIL", "exit status 1", "make: *** [all] Error 2",
	// "error: could not compile `x`"): a summary should not keep them in
	// place of Identifying.
	Generic []string `json:"generic,omitempty"`
	// Trouble, for an output that did not fail, are lines that nonetheless
	// report something wrong worth remembering (a failing test in a run that
	// passed, a deprecation that breaks the next upgrade); empty for most.
	Trouble []string `json:"trouble,omitempty"`
	// Description says in a sentence what the bug or situation was.
	Description string `json:"description"`
}

// Case is one recorded output with its Meta.
type Case struct {
	// ID is "<family>/<case>".
	ID     string
	Meta   Meta
	Output string
}

// All returns every recorded case, sorted by ID. A case whose files are
// missing or malformed is left out and named in the error, which lists every
// problem; the well-formed cases are returned with it.
func All() ([]Case, error) {
	var cases []Case
	var problems []error
	err := fs.WalkDir(recorded, "recorded", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		base := strings.TrimSuffix(p, ".json")
		id := strings.TrimPrefix(base, "recorded/")
		raw, err := recorded.ReadFile(p)
		if err != nil {
			return err
		}
		out, err := recorded.ReadFile(base + ".out")
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: no %s.out beside its meta", id, path.Base(base)))
			return nil
		}
		var m Meta
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			problems = append(problems, fmt.Errorf("%s.json: %w", id, err))
			return nil
		}
		c := Case{ID: id, Meta: m, Output: string(out)}
		if err := c.check(); err != nil {
			problems = append(problems, err)
			return nil
		}
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].ID < cases[j].ID })
	return cases, errors.Join(problems...)
}

// check reports what is wrong with a case: a meta field missing, a labelled
// line that is not a whole line of the output.
func (c *Case) check() error {
	var errs []error
	family, _, _ := strings.Cut(c.ID, "/")
	if c.Meta.Family != family {
		errs = append(errs, fmt.Errorf("family: %q, but the case is recorded under %q", c.Meta.Family, family))
	}
	for field, v := range map[string]string{"tool": c.Meta.Tool, "version": c.Meta.Version, "command": c.Meta.Command, "description": c.Meta.Description} {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, fmt.Errorf("%s: missing", field))
		}
	}
	if c.Meta.ExitCode != 0 && !c.Meta.Failed {
		errs = append(errs, fmt.Errorf("failed: false, but exit_code is %d", c.Meta.ExitCode))
	}
	if c.Meta.Failed && len(c.Meta.Identifying) == 0 {
		errs = append(errs, errors.New("identifying: a failed output needs the lines that identify its failure"))
	}
	if !c.Meta.Failed && len(c.Meta.Identifying) > 0 {
		errs = append(errs, errors.New("identifying: only a failed output has identifying lines (use trouble)"))
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(c.Output, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for field, labelled := range map[string][]string{"identifying": c.Meta.Identifying, "generic": c.Meta.Generic, "trouble": c.Meta.Trouble} {
		for i, l := range labelled {
			if l == "" || !lines[l] {
				errs = append(errs, fmt.Errorf("%s[%d]: %q is not a whole line of the output", field, i, l))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", c.ID, errors.Join(errs...))
}

//go:embed conversation
var conversation embed.FS

// Phrase is something a person said in a coding session, in their own
// words, and the part of it a summary must keep.
type Phrase struct {
	// Text is the whole message or sentences as said.
	Text string `json:"text"`
	// Fact is the exact substring of Text a summary must keep to remember
	// it; empty for chatter and requests.
	Fact string `json:"fact"`
	// Lang is the language of the project it fits: go, python, typescript,
	// java, rust, or any.
	Lang string `json:"lang"`
	// Context says in a few words what kind of project or situation it fits.
	Context string `json:"context"`
}

// Conversation is the corpus of wording (conversation/*.jsonl), written
// apart from and without reading ctxc's classifier: what users require,
// what assistants conclude, what users mention, what carries nothing, and
// what users ask for.
type Conversation struct {
	Constraints, Decisions, Notes, Chatter, Requests []Phrase
}

// LoadConversation reads the conversation corpus, checking that every
// phrase's fact is part of its text.
func LoadConversation() (*Conversation, error) {
	c := &Conversation{}
	var errs []error
	for _, f := range []struct {
		name     string
		into     *[]Phrase
		needFact bool
	}{{"constraints", &c.Constraints, true}, {"decisions", &c.Decisions, true}, {"notes", &c.Notes, true}, {"chatter", &c.Chatter, false}, {"requests", &c.Requests, false}} {
		raw, err := conversation.ReadFile("conversation/" + f.name + ".jsonl")
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var p Phrase
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				errs = append(errs, fmt.Errorf("conversation/%s.jsonl:%d: %w", f.name, i+1, err))
				continue
			}
			switch {
			case strings.TrimSpace(p.Text) == "":
				errs = append(errs, fmt.Errorf("conversation/%s.jsonl:%d: text: empty", f.name, i+1))
			case f.needFact && (p.Fact == "" || !strings.Contains(p.Text, p.Fact)):
				errs = append(errs, fmt.Errorf("conversation/%s.jsonl:%d: fact: %q is not part of the text", f.name, i+1, p.Fact))
			default:
				*f.into = append(*f.into, p)
			}
		}
	}
	return c, errors.Join(errs...)
}

package synth

import (
	"encoding/json"
	"fmt"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// toolSpec is one tool of the agent: its definition and how its calls fail.
type toolSpec struct {
	name, description, schema string
	// failWeight scales Options.FailureRate for this tool.
	failWeight float64
	// sized tools return outputs drawn from Options.ToolOutputs; the others
	// (writes, patches) answer briefly.
	sized bool
}

var toolSpecs = []toolSpec{
	{"read_file", "Read a file of the repository. Returns its content.", `{"type":"object","properties":{"path":{"type":"string","description":"path relative to the repository root"},"start_line":{"type":"integer"},"end_line":{"type":"integer"}},"required":["path"]}`, 0.3, true},
	{"grep", "Search the repository with a regular expression; prints path:line:text.", `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"ignore_case":{"type":"boolean"}},"required":["pattern"]}`, 0, true},
	{"list_dir", "List a directory.", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, 0.2, true},
	{"run_tests", "Run the test suite or part of it and return the output.", `{"type":"object","properties":{"target":{"type":"string","description":"package, file or pattern"},"args":{"type":"array","items":{"type":"string"}}}}`, 2.2, true},
	{"shell", "Run a shell command in the repository (non-interactive, 120 s timeout).", `{"type":"object","properties":{"command":{"type":"string"},"timeout_s":{"type":"integer"}},"required":["command"]}`, 1.3, true},
	{"write_file", "Create or overwrite a file.", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`, 0.4, false},
	{"apply_patch", "Apply a patch in the V4A diff format.", `{"type":"object","properties":{"patch":{"type":"string"}},"required":["patch"]}`, 0.8, false},
	{"http_get", "GET a URL on the internal network and return status, headers and body.", `{"type":"object","properties":{"url":{"type":"string","format":"uri"},"headers":{"type":"object","additionalProperties":{"type":"string"}}},"required":["url"]}`, 1.8, true},
	{"search_docs", "Search library documentation.", `{"type":"object","properties":{"query":{"type":"string"},"library":{"type":"string"}},"required":["query"]}`, 0, true},
	{"run_sql", "Run a read-only SQL query against the staging replica.", `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`, 1.2, true},
}

func toolByName(name string) toolSpec {
	for _, t := range toolSpecs {
		if t.name == name {
			return t
		}
	}
	panic("synth: unknown tool " + name)
}

func toolDefinitions() []*ctxcv1.ToolDefinition {
	defs := make([]*ctxcv1.ToolDefinition, len(toolSpecs))
	for i, t := range toolSpecs {
		defs[i] = &ctxcv1.ToolDefinition{Name: t.name, Description: t.description, ParametersJson: t.schema}
	}
	return defs
}

// phase tools: what an agent calls when exploring, changing, and checking.
var (
	exploreTools = []string{"read_file", "read_file", "read_file", "grep", "grep", "list_dir", "search_docs", "run_sql", "http_get", "shell"}
	changeTools  = []string{"apply_patch", "apply_patch", "write_file", "read_file"}
	checkTools   = []string{"run_tests", "run_tests", "run_tests", "shell", "shell", "http_get", "run_sql"}
)

func argsJSON(v map[string]any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// callArgs makes realistic arguments for a call of tool, and the subject the
// output is about (the path read, the pattern searched, the kind of command).
func (w *world) callArgs(tool string) (args string, subject string) {
	r := w.r
	switch tool {
	case "read_file":
		path := w.file()
		a := map[string]any{"path": path}
		if r.chance(0.2) {
			start := r.between(1, 400)
			a["start_line"], a["end_line"] = start, start+r.between(40, 300)
		}
		return argsJSON(a), path
	case "grep":
		sym := w.symbol()
		a := map[string]any{"pattern": pick(r, []string{sym, sym + `\(`, sym + "|" + w.symbol()})}
		if r.chance(0.6) {
			a["path"] = w.pkg()
		}
		return argsJSON(a), sym
	case "list_dir":
		dir := pick(r, append([]string{"."}, w.pkgs...))
		return argsJSON(map[string]any{"path": dir}), dir
	case "run_tests":
		switch w.lang {
		case "go":
			return argsJSON(map[string]any{"target": "./" + w.pkg() + "/...", "args": pick(r, [][]string{{"-run", pick(r, w.tests)}, {"-race"}, {"-count=1"}, {}})}), ""
		case "python":
			return argsJSON(map[string]any{"target": "tests/" + w.noun(), "args": pick(r, [][]string{{"-x"}, {"-k", pick(r, w.tests)}, {"-q"}, {}})}), ""
		}
		return argsJSON(map[string]any{"target": w.pkg(), "args": pick(r, [][]string{{"--run"}, {"-t", w.symbol()}, {}})}), ""
	case "shell":
		kind := pick(r, []string{"git log", "git diff", "kubectl", "build", "ls", "build", "build", "git push"})
		builds := map[string][]string{
			"go":         {"make build", "make lint", "go vet ./...", "go build ./...", "golangci-lint run"},
			"python":     {"make lint", "mypy " + w.module, "ruff check .", "python -m build", "alembic upgrade head --sql"},
			"typescript": {"npm run build", "npx tsc --noEmit", "npm run lint", "npx prisma validate"},
		}[w.lang]
		cmd := map[string]string{
			"git log":  "git log --stat -n " + fmt.Sprint(r.between(5, 40)) + " -- " + w.pkg(),
			"git diff": "git diff origin/main -- " + w.file(),
			"git push": "git push origin " + w.branch,
			"kubectl":  "kubectl -n " + w.project + " get pods",
			"build":    pick(r, append(builds, "docker build -t "+w.project+":dev .")),
			"ls":       "ls -la " + w.pkg(),
		}[kind]
		return argsJSON(map[string]any{"command": cmd}), kind
	case "write_file":
		path := w.file()
		return argsJSON(map[string]any{"path": path, "content": w.sourceFile(path, r.between(300, 2200))}), ""
	case "apply_patch":
		path := w.file()
		return argsJSON(map[string]any{"patch": "*** Begin Patch\n*** Update File: " + path + "\n" + w.gitDiff(path, r.between(200, 1400)) + "*** End Patch"}), ""
	case "http_get":
		path := strings.ReplaceAll(w.endpoint(), "{id}", w.noun()[:min(3, len(w.noun()))]+"_"+r.token(10, alnum))
		return argsJSON(map[string]any{"url": "https://staging." + w.project + ".internal" + path}), path
	case "search_docs":
		return argsJSON(map[string]any{"query": pick(r, []string{"connection pool timeout", "cursor pagination", "retry backoff jitter", "transaction isolation", "context cancellation", "streaming writer", "rate limiter"}), "library": w.lib()}), ""
	case "run_sql":
		return argsJSON(map[string]any{"query": fmt.Sprintf("SELECT id, tenant_id, status, updated_at FROM %s WHERE updated_at > now() - interval '%d hours' ORDER BY updated_at DESC", w.table(), r.between(1, 72)), "limit": r.between(20, 500)}), ""
	}
	panic("synth: no arguments for tool " + tool)
}

// output is a successful output of tool of about size characters.
func (w *world) output(tool, subject string, size int) string {
	r := w.r
	switch tool {
	case "read_file":
		return w.sourceFile(subject, size)
	case "grep":
		return w.grepOutput(subject, size)
	case "list_dir":
		return w.dirListing(subject, size)
	case "run_tests":
		return w.testLog(size, "")
	case "shell":
		switch subject {
		case "git log":
			return w.gitLog(size)
		case "git diff":
			return w.gitDiff(w.file(), size)
		case "kubectl":
			return w.podList(size)
		case "ls":
			return w.dirListing(w.pkg(), size)
		case "git push":
			return fmt.Sprintf("Enumerating objects: %d, done.\nWriting objects: 100%% (%d/%[2]d), done.\nTo github.com:%s/%s.git\n   %s..%s  %s -> %[7]s\n", r.between(5, 90), r.between(3, 40), w.org, w.project, r.hex(7), r.hex(7), w.branch)
		}
		return w.buildLog(size)
	case "write_file":
		return fmt.Sprintf("Wrote %d bytes to %s", r.between(300, 9000), w.file())
	case "apply_patch":
		return pick(r, []string{"Success. Updated the following files:\nM ", "patch applied cleanly: ", "Done! Modified "}) + w.file()
	case "http_get":
		return w.httpResponse("200 OK", size)
	case "search_docs":
		return w.docsExcerpt(w.noun(), size)
	case "run_sql":
		return w.sqlRows(size)
	}
	panic("synth: no output for tool " + tool)
}

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goNames are the names the repository's Go code declares: per package its
// top-level names, per type its methods and fields.
type goNames struct {
	packages map[string]map[string]bool // package name → top-level names
	types    map[string]map[string]bool // type name → methods and fields (any package)
}

// goFile is one Go file of the repository, parsed.
type goFile struct {
	path string // from the repository's root, slash-separated
	file *ast.File
}

// test says whether the file is a test file.
func (g goFile) test() bool { return strings.HasSuffix(g.path, "_test.go") }

// in says whether the file is under one of the directories (from the root).
func (g goFile) in(dirs ...string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(g.path, d+"/") {
			return true
		}
	}
	return false
}

// repoGoFiles parses every Go file of the repository but those of testdata,
// node_modules, vendor and hidden directories: the one walk of the checks
// that read the code.
func repoGoFiles(t *testing.T, fset *token.FileSet) []goFile {
	t.Helper()
	const root = "../.."
	var files []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, goFile{filepath.ToSlash(rel), f})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("read %d Go files of the repository: the walk no longer finds them", len(files))
	}
	return files
}

func readGoNames(t *testing.T) goNames {
	t.Helper()
	n := goNames{packages: map[string]map[string]bool{}, types: map[string]map[string]bool{}}
	member := func(typ, name string) {
		if n.types[typ] == nil {
			n.types[typ] = map[string]bool{}
		}
		n.types[typ][name] = true
	}
	// Test files count: the document names tests and benchmarks too.
	for _, g := range repoGoFiles(t, token.NewFileSet()) {
		f := g.file
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		if n.packages[pkg] == nil {
			n.packages[pkg] = map[string]bool{}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					n.packages[pkg][d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						n.packages[pkg][s.Name.Name] = true
						if n.types[s.Name.Name] == nil {
							n.types[s.Name.Name] = map[string]bool{}
						}
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, f := range st.Fields.List {
								for _, name := range f.Names {
									member(s.Name.Name, name.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, name := range s.Names {
							n.packages[pkg][name.Name] = true
						}
					}
				}
			}
		}
	}
	return n
}

// dotted is a Go name as the architecture document cites one: pkg.Name,
// pkg.Type.Method, Type.Method or Type.Field.
var dotted = regexp.MustCompile("`([A-Za-z][A-Za-z0-9]*(?:\\.[A-Za-z][A-Za-z0-9]*)+)`")

// camel is a single Go name as the document cites one (namedForCaller,
// RunObserver): mixed case, which the YAML keys and proto fields it also
// cites (snake_case) never are.
var camel = regexp.MustCompile("`((?:[a-z]+|[A-Z][a-z]+)[A-Z][A-Za-z0-9]*)`")

// sourcePath is a file or directory of the repository as the document cites
// one.
var sourcePath = regexp.MustCompile("`((?:[a-z0-9_]+/)+[A-Za-z0-9_.-]*)`")

// TestArchitectureNamesExist: every Go name docs/ARCHITECTURE.md and its
// design notes (docs/design.md) cite
// (pkg.Name, Type.Method, pkg.Type.Method whose first part is one of the
// repository's packages or types, and every mixed-case single name) exists
// in the code, and so does every path it cites
// into the repository, so that the document cannot go on naming code that is
// gone.
func TestArchitectureNamesExist(t *testing.T) {
	names := readGoNames(t)
	for _, file := range []string{"docs/ARCHITECTURE.md", "docs/design.md", "docs/extending.md"} {
		t.Run(file, func(t *testing.T) { checkNamesExist(t, file, names) })
	}
}

func checkNamesExist(t *testing.T, file string, names goNames) {
	doc, err := os.ReadFile("../../" + file)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range dotted.FindAllStringSubmatch(string(doc), -1) {
		parts := strings.Split(m[1], ".")
		var ok, known bool
		if top, isPkg := names.packages[parts[0]]; isPkg {
			known = true
			ok = top[parts[1]] && (len(parts) == 2 || names.types[parts[1]][parts[2]])
		}
		if members, isType := names.types[parts[0]]; isType && !ok {
			known = true
			ok = members[parts[1]] && len(parts) == 2
		}
		if !known {
			continue // another module's (cmp.Diff), or a proto or YAML field
		}
		checked++
		if !ok {
			t.Errorf("%s names `%s`, which the code does not declare", file, m[1])
		}
	}
	declared := func(name string) bool {
		for _, top := range names.packages {
			if top[name] {
				return true
			}
		}
		for _, members := range names.types {
			if members[name] {
				return true
			}
		}
		return false
	}
	// google.rpc's error details, which the API's errors carry.
	external := map[string]bool{"BadRequest": true, "PreconditionFailure": true, "ErrorInfo": true, "RetryInfo": true}
	for _, m := range camel.FindAllStringSubmatch(string(doc), -1) {
		checked++
		if !declared(m[1]) && !external[m[1]] {
			t.Errorf("%s names `%s`, which the code does not declare", file, m[1])
		}
	}
	for _, m := range sourcePath.FindAllStringSubmatch(string(doc), -1) {
		p := m[1]
		if strings.Contains(p, "<") || strings.HasPrefix(p, "ctxc/") || !strings.Contains(strings.TrimSuffix(p, "/"), "/") {
			continue // a pattern, a proto package, or a name any directory may have (testdata/)
		}
		checked++
		if _, err := os.Stat(filepath.Join("../..", strings.TrimSuffix(p, "/"))); err != nil {
			t.Errorf("%s names the path `%s`, which the repository does not hold", file, p)
		}
	}
	if checked < 15 {
		t.Errorf("only %d names checked: the patterns no longer match how the document cites code", checked)
	}
}

// TestArchitectureMapHoldsTheTree: every directory the map in
// docs/ARCHITECTURE.md ("Where things live") lists exists, and every Go
// package directory of the module is listed in it or under a listed one.
func TestArchitectureMapHoldsTheTree(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(doc), "## Where things live")
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	listed := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		prefix := ""
		switch indent := len(line) - len(strings.TrimLeft(line, " ")); {
		case indent == 2:
			prefix = "internal/"
		case indent > 2 || line == "":
			continue // the description of the entry above
		}
		entries, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
		for _, e := range strings.Split(entries, ",") {
			e = strings.TrimSuffix(strings.TrimSpace(e), "/")
			if e == "" || strings.Contains(e, "<") {
				continue
			}
			path := prefix + e
			if prefix == "" && e == "internal" {
				continue
			}
			listed[path] = true
			if info, err := os.Stat("../../" + path); err != nil || !info.IsDir() {
				t.Errorf("the map lists %s, which is not a directory of the repository", path)
			}
		}
	}
	if len(listed) < 30 {
		t.Fatalf("the map lists %d directories: the pattern no longer reads it", len(listed))
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-f", "{{.Dir}}", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil || rel == "." {
			continue
		}
		rel = filepath.ToSlash(rel)
		covered := false
		for p := rel; p != "." && p != "/"; p = filepath.ToSlash(filepath.Dir(p)) {
			if listed[p] {
				covered = true
				break
			}
		}
		if !covered {
			t.Errorf("package directory %s is in no entry of the map", rel)
		}
	}
}

// TestAdapterAndTransportImportNoStage: the gRPC adapter and the transport
// around it reach the policies only through the application layer, and
// the adapter takes no metrics (docs/ARCHITECTURE.md, "Where things live").
func TestAdapterAndTransportImportNoStage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command: %v", err)
	}
	const module = "github.com/contextcompiler/ctxc/"
	for pkg, forbidMetrics := range map[string]bool{"internal/adapter": true, "internal/service": false} {
		out, err := exec.Command(goTool, "list", "-deps", "../../"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed %d packages", pkg, len(deps))
		}
		for _, dep := range deps {
			rel, ours := strings.CutPrefix(dep, module)
			if !ours {
				continue
			}
			// The policies' own packages; agentstate beside them is the domain
			// every layer speaks.
			if stage, ok := strings.CutPrefix(rel, "policies/"); ok && stage != "agentstate" {
				t.Errorf("%s imports the policy package %s", pkg, rel)
			}
			if forbidMetrics && rel == "internal/metrics" {
				t.Errorf("%s imports %s", pkg, rel)
			}
		}
	}
}

// TestOnlyTheDomainDefinesMessages: every package takes its messages from
// package agentstate; none declares an exported message type of its own
// (the providers' request bodies, package internal/providers/wire, name
// their messages as the APIs do: a body's shape, never a message ctxc keeps).
func TestOnlyTheDomainDefinesMessages(t *testing.T) {
	seen := 0
	for _, g := range repoGoFiles(t, token.NewFileSet()) {
		if g.test() || !g.in("internal", "policies", "server") || g.in(wireDir) {
			continue
		}
		for _, decl := range g.file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				name := spec.(*ast.TypeSpec).Name.Name
				if !ast.IsExported(name) || !strings.HasSuffix(name, "Message") {
					continue
				}
				seen++
				if g.file.Name.Name != "agentstate" {
					t.Errorf("%s declares %s: messages are agentstate.Message", g.path, name)
				}
			}
		}
	}
	if seen == 0 {
		t.Error("no message type found: agentstate.Message should be")
	}
}

// wireDir is the package of the providers' request bodies, as the tests
// here walk to it.
const wireDir = "internal/providers/wire"

// providerWireKeys are JSON names only the providers' request bodies use: a
// struct tagged with one mirrors such a body.
var providerWireKeys = []string{
	"tool_calls", "tool_call_id", "function_call", // Chat Completions (and Ollama)
	"tool_use_id", "input_schema", "cache_control", // Anthropic Messages
	"call_id", "encrypted_content", // Responses
	"functionCall", "functionResponse", "functionDeclarations", "systemInstruction", "thoughtSignature", "generationConfig", "inlineData", // Gemini
}

// TestOneSetOfProviderWireTypes: the providers' request bodies are declared
// once, in internal/providers/wire, for the proxy, eval and the scripted
// model alike; no other package, tests included, declares a struct tagged
// with their JSON names (internal/providers itself keeps raw views of a
// body beside the splicer, and gen/ is the protos' code). Every name
// checked is one package wire declares, so the list cannot drift from it.
func TestOneSetOfProviderWireTypes(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range providerWireKeys {
		keys[k] = true
	}
	tagged := func(f *ast.File) (hits []string) {
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if field.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(field.Tag.Value)
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if keys[name] {
					hits = append(hits, name)
				}
			}
			return true
		})
		return hits
	}
	declared := map[string]bool{}
	files := repoGoFiles(t, token.NewFileSet())
	for _, g := range files {
		if g.in(wireDir) {
			for _, k := range tagged(g.file) {
				declared[k] = true
			}
		}
	}
	for _, k := range providerWireKeys {
		if !declared[k] {
			t.Errorf("package wire declares no field tagged %q: the list names a key it does not", k)
		}
	}
	for _, g := range files {
		if g.in("internal/providers", "gen") {
			continue
		}
		if hits := tagged(g.file); len(hits) > 0 {
			t.Errorf("%s declares a struct tagged %q: provider request bodies are package wire's (internal/providers/wire)", g.path, hits)
		}
	}
}

// TestWorkByNeed: a helper beneath a policy's Apply takes what it uses (a
// counter, the entries, a small interface), not the whole working set. The
// declarations that take *policies.Work outside package policies were 97
// when helpers took it by habit; at most 45 may, so that it does not creep
// back.
func TestWorkByNeed(t *testing.T) {
	const most = 45
	fset := token.NewFileSet()
	var takers []string
	for _, g := range repoGoFiles(t, fset) {
		if g.test() || !g.in("internal", "policies", "server", "cmd") || path.Dir(g.path) == "policies" {
			continue
		}
		for _, decl := range g.file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			for _, field := range fn.Type.Params.List {
				star, ok := field.Type.(*ast.StarExpr)
				if !ok {
					continue
				}
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Work" {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "policies" {
						takers = append(takers, fset.Position(fn.Pos()).String()+" "+fn.Name.Name)
						break
					}
				}
			}
		}
	}
	if len(takers) == 0 {
		t.Fatal("no function takes *policies.Work: the policies' Apply methods should")
	}
	if len(takers) > most {
		t.Errorf("%d functions take *policies.Work, at most %d may:\n%s", len(takers), most, strings.Join(takers, "\n"))
	}
	t.Logf("%d functions take *policies.Work", len(takers))
}

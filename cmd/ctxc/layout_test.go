package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// specifiedLayout is the top level the service was specified with: the
// module, the protos and their generated code, the binary, the public Go API
// (server: the service as a library; policies: the policy contract and the
// built-in policies), the container build, the make targets and the tests
// against the real binary.
var specifiedLayout = []string{
	"go.mod", "go.sum", "buf.yaml", "buf.gen.yaml", "proto/", "gen/", "cmd/",
	"server/", "policies/", "Dockerfile", "Makefile", "integration/",
}

// TestSpecifiedLayout: the twelve entries are there, and server and
// policies are Go packages outside internal/, so another module can import
// them.
func TestSpecifiedLayout(t *testing.T) {
	for _, entry := range specifiedLayout {
		info, err := os.Stat("../../" + strings.TrimSuffix(entry, "/"))
		if err != nil {
			t.Errorf("top-level %s: %v", entry, err)
			continue
		}
		if dir := strings.HasSuffix(entry, "/"); info.IsDir() != dir {
			t.Errorf("top-level %s: directory %v, want %v", entry, info.IsDir(), dir)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command: %v", err)
	}
	out, err := exec.Command(goTool, "list", "../../server", "../../policies", "../../policies/...").Output()
	if err != nil {
		t.Fatalf("go list server policies: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list server policies/... listed %q: want server, policies and its built-in policies", pkgs)
	}
	for _, pkg := range pkgs {
		if strings.Contains(pkg, "/internal/") || !strings.HasPrefix(pkg, "github.com/contextcompiler/ctxc/") {
			t.Errorf("%s: the public API must not be under internal/", pkg)
		}
	}
}

// TestPublicTypesAreOwn: package server declares its own types, none an
// alias (type X = ...), and no exported field of them has an internal
// package's type; no type of package policies or the packages beneath it
// is an alias of an internal type. Another module can build a Config, or
// write a policy, naming nothing it cannot import, and an internal type
// can change without changing the public API.
func TestPublicTypesAreOwn(t *testing.T) {
	fset := token.NewFileSet()
	var problems []string
	read := 0
	for _, g := range repoGoFiles(t, fset) {
		if g.test() {
			continue
		}
		if strict := path.Dir(g.path) == "server"; strict || g.in("policies") {
			read++
			problems = append(problems, publicTypeProblems(fset, g.file, strict)...)
		}
	}
	if read < 20 {
		t.Fatalf("read %d files of server and policies", read)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// publicTypeProblems names each exported type of a file declared as an
// alias (any alias when strict, else one of an internal package's type)
// and, when strict, each exported field of an exported struct whose type
// names an internal package.
func publicTypeProblems(fset *token.FileSet, f *ast.File, strict bool) []string {
	var problems []string
	internal := map[string]bool{} // the file's import names of internal packages
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		if !strings.Contains(p, "/internal/") {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		internal[name] = true
	}
	namesInternal := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
					found = true
				}
			}
			return !found
		})
		return found
	}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, spec := range g.Specs {
			ts := spec.(*ast.TypeSpec)
			if !ts.Name.IsExported() {
				continue
			}
			where := fset.Position(ts.Pos()).String()
			if ts.Assign.IsValid() && (strict || namesInternal(ts.Type)) {
				problems = append(problems, fmt.Sprintf("%s: type %s is an alias (type %s = ...); declare the type in package %s", where, ts.Name.Name, ts.Name.Name, f.Name.Name))
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !strict || !ok {
				continue
			}
			for _, field := range st.Fields.List {
				exported := len(field.Names) == 0 // embedded
				for _, n := range field.Names {
					exported = exported || n.IsExported()
				}
				if exported && namesInternal(field.Type) {
					problems = append(problems, fmt.Sprintf("%s: a field of %s has an internal package's type", fset.Position(field.Pos()), ts.Name.Name))
				}
			}
		}
	}
	return problems
}

package diagnose

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"
)

// TestEveryPatternCompiles: patterns compile on first use, so one that
// does not would panic only when a tool output first reaches it. Every
// later(`...`) of the package's source compiles here, and the composed
// ones build.
func TestEveryPatternCompiles(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			ast.Inspect(f, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					return true
				}
				if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "later" {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok {
					return true // later's own declaration passes expr
				}
				expr, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return true
				}
				if _, err := regexp.Compile(expr); err != nil {
					t.Errorf("%s: later(%s): %v", name, lit.Value, err)
				}
				n++
				return true
			})
		}
	}
	if n < 100 {
		t.Errorf("found %d patterns, want the package's more than a hundred", n)
	}
	if statusAny.re() == nil || !statusAny.MatchString("npm ERR! code ELIFECYCLE") {
		t.Error("statusAny does not build from statusRes")
	}
}

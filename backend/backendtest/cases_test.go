package backendtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

// TestEveryOpHasACase: every op described in backend/ops is called by the
// suite, and every case (a func test*(e *env)) is named somewhere besides
// its declaration (Run's list), so that an op added without its case, or
// a case not registered in Run, fails here instead of passing unchecked.
func TestEveryOpHasACase(t *testing.T) {
	spec, err := wrapgen.Load("../ops")
	if err != nil {
		t.Fatal(err)
	}
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", notTest, 0)
	if err != nil {
		t.Fatal(err)
	}
	called, named, cases := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl: // its name is a declaration, not a use
			if x.Recv == nil && strings.HasPrefix(x.Name.Name, "test") && x.Type.Params.NumFields() == 1 {
				cases[x.Name.Name] = true
			}
			ast.Inspect(x.Type, visit)
			if x.Body != nil {
				ast.Inspect(x.Body, visit)
			}
			return false
		case *ast.CallExpr:
			if s, ok := x.Fun.(*ast.SelectorExpr); ok {
				called[s.Sel.Name] = true
			}
		case *ast.Ident:
			named[x.Name] = true
		}
		return true
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, visit)
		}
	}
	for _, f := range spec.Files {
		for _, op := range f.Ops {
			if !called[op.Name] {
				t.Errorf("op %s (ops/%s.yaml) is called by no conformance case", op.Name, f.Name)
			}
		}
	}
	if len(cases) == 0 {
		t.Fatal("no conformance cases found")
	}
	for c := range cases {
		if !named[c] {
			t.Errorf("case %s is not in Run's list", c)
		}
	}
}

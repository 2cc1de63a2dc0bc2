// Package wrapgen writes the op methods of the backend wrappers (package
// record, which captures ops, and package profile, which times them) from
// the backend interfaces, so that a new op needs no hand-written
// forwarding: every method without results of the required op interfaces
// (Sampling, Dense with Steps, Sparse) and of the op capabilities
// (Attention, HotRows, TieredGather, Norm, JumpingKnowledge, Link) becomes one
// line that hands the call to the wrapper's hook. A capability's op
// reaches the inner backend through a type assertion: the wrappers have
// every op capability, and backend's need (AttentionOf, ...) checks the backend at the bottom of
// the wrappers before a model or store is built on one. Methods with
// results, and the memory and other capability methods, stay hand-written
// in the wrappers.
//
// `go generate` in backend/record and backend/profile runs the command in
// ./gen; each package's test fails when its generated file is stale.
package wrapgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Ops are the required interfaces whose methods are generated.
var Ops = []string{"Sampling", "Dense", "Sparse"}

// Caps are the op capabilities whose methods are generated; the wrappers
// are declared to have each.
var Caps = []string{"Attention", "HotRows", "TieredGather", "Norm", "JumpingKnowledge", "Link"}

// Hooks are the wrappers' call forms: %[1]s is the method's name, %[2]s its
// arguments, %[3]s the inner backend (as the method's interface).
var Hooks = map[string]string{
	"record":  "b.do(func() { %[3]s.%[1]s(%[2]s) })",
	"profile": "b.op(%[1]q, func() { %[3]s.%[1]s(%[2]s) })",
}

// File is the name of the generated file in each wrapper package.
const File = "ops_gen.go"

// Method is one generated op.
type Method struct {
	Name   string
	Cap    string // the capability it belongs to; "" for the required ops
	Params string // "x backend.Buffer, n backend.Count"
	Args   string // "x, n"
}

// Methods reads the backend package in dir and returns the ops to
// generate, sorted by name.
func Methods(dir string) ([]Method, error) {
	fset := token.NewFileSet()
	ifaces := map[string]*ast.InterfaceType{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					ifaces[ts.Name.Name] = it
				}
			}
			return true
		})
	}
	var out []Method
	seen := map[string]bool{}
	var walk func(name, cap string) error
	walk = func(name, cap string) error {
		it, ok := ifaces[name]
		if !ok {
			return fmt.Errorf("wrapgen: no interface %s in %s", name, dir)
		}
		for _, f := range it.Methods.List {
			switch t := f.Type.(type) {
			case *ast.Ident: // an embedded interface of the package
				if err := walk(t.Name, cap); err != nil {
					return err
				}
			case *ast.FuncType:
				if t.Results != nil && len(t.Results.List) > 0 {
					continue // hand-written: it returns something
				}
				for _, n := range f.Names {
					if seen[n.Name] {
						continue
					}
					seen[n.Name] = true
					m, err := method(fset, n.Name, t)
					if err != nil {
						return err
					}
					m.Cap = cap
					out = append(out, m)
				}
			}
		}
		return nil
	}
	for _, name := range Ops {
		if err := walk(name, ""); err != nil {
			return nil, err
		}
	}
	for _, name := range Caps {
		if err := walk(name, name); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// method renders one method's parameters with the backend's types
// qualified, renaming a parameter called b (the wrappers' receiver).
func method(fset *token.FileSet, name string, t *ast.FuncType) (Method, error) {
	var params, args []string
	for i, p := range t.Params.List {
		var typ bytes.Buffer
		if err := format.Node(&typ, fset, qualify(p.Type)); err != nil {
			return Method{}, err
		}
		names := p.Names
		if len(names) == 0 {
			names = []*ast.Ident{ast.NewIdent(fmt.Sprintf("p%d", i))}
		}
		var ns []string
		for _, n := range names {
			v := n.Name
			if v == "b" {
				v = "bb"
			}
			ns = append(ns, v)
			args = append(args, v)
		}
		params = append(params, strings.Join(ns, ", ")+" "+typ.String())
	}
	return Method{Name: name, Params: strings.Join(params, ", "), Args: strings.Join(args, ", ")}, nil
}

// qualify copies a type expression with the backend's exported names
// prefixed by "backend.".
func qualify(e ast.Expr) ast.Expr {
	switch t := e.(type) {
	case *ast.Ident:
		if ast.IsExported(t.Name) {
			return &ast.SelectorExpr{X: ast.NewIdent("backend"), Sel: ast.NewIdent(t.Name)}
		}
		return ast.NewIdent(t.Name)
	case *ast.StarExpr:
		return &ast.StarExpr{X: qualify(t.X)}
	case *ast.ArrayType:
		return &ast.ArrayType{Len: t.Len, Elt: qualify(t.Elt)}
	case *ast.Ellipsis:
		return &ast.Ellipsis{Elt: qualify(t.Elt)}
	}
	return e // selectors (other packages) and func types as written
}

// Generate returns the formatted ops file of wrapper package pkg ("record"
// or "profile") for the backend package in dir.
func Generate(dir, pkg string) ([]byte, error) {
	hook, ok := Hooks[pkg]
	if !ok {
		return nil, fmt.Errorf("wrapgen: no hook for package %q", pkg)
	}
	ms, err := Methods(dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by backend/internal/wrapgen from the backend interfaces (%s; capabilities %s); DO NOT EDIT.\n\n",
		strings.Join(Ops, ", "), strings.Join(Caps, ", "))
	fmt.Fprintf(&b, "package %s\n\nimport \"github.com/fanout-gnn/fanout/backend\"\n\nvar (\n", pkg)
	for _, c := range Caps {
		fmt.Fprintf(&b, "\t_ backend.%s = (*Backend)(nil)\n", c)
	}
	fmt.Fprintf(&b, ")\n")
	for _, m := range ms {
		inner := "b.inner"
		if m.Cap != "" {
			inner = fmt.Sprintf("b.inner.(backend.%s)", m.Cap)
		}
		fmt.Fprintf(&b, "\nfunc (b *Backend) %s(%s) {\n\t%s\n}\n", m.Name, m.Params, fmt.Sprintf(hook, m.Name, m.Args, inner))
	}
	return format.Source(b.Bytes())
}

// Write writes pkg's generated file into dir (the wrapper's directory),
// reading the backend package in backendDir.
func Write(backendDir, dir, pkg string) error {
	src, err := Generate(backendDir, pkg)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, File), src, 0o644)
}

// Stale returns an error when the generated file in the current directory
// (a wrapper package's, as its tests run) differs from what Generate
// writes now.
func Stale(backendDir, pkg string) error {
	want, err := Generate(backendDir, pkg)
	if err != nil {
		return err
	}
	got, err := os.ReadFile(File)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s is stale: run go generate ./backend/%s", File, pkg)
	}
	return nil
}

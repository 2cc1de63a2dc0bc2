package wrapgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// Binding is one kernel launch of the CUDA backend with its parameters in
// the kernel's order, written in a description as
//
//	[name =] kernel(arg, arg, ...)
//
// kernel is a kernel's name, names joined by | (kernels of one signature
// the launch picks from) or a prefix ending in * (every kernel whose name
// starts with it). An arg is the value of an op's parameter or checked
// field (x, n, n.Cap, blk.Indptr, blk.NumDst.Cap, r, r.Seed), err (the
// device's error record), nil (a null pointer), $name:kind (a value the
// launch is given: ptr, i32, u32, f32, i64, flag or bytes) or expr:kind (a
// Go expression over the op's checked arguments). name is the Go method,
// launch followed by the kernel's name in camel case, or by name.
type Binding struct {
	Func    string
	Kernels []string
	Args    []*KArg
	op      *Op
}

// KArg is one value a binding passes: it fills Kinds (one per kernel
// parameter) with the calls in Go.
type KArg struct {
	Src   string
	Kinds []string
	Go    []string // argPack calls: "ptr(a.x.addr())"
	Extra string   // set for $name: the launch's parameter
}

// variant reports whether the launch names its kernel.
func (b *Binding) variant() bool {
	return len(b.Kernels) > 1 || strings.HasSuffix(b.Kernels[0], "*")
}

// goKind is the Go type of an argPack method's value.
func goKind(k string) (string, bool) {
	t, ok := map[string]string{
		"ptr": "uintptr", "i32": "int", "u32": "uint32", "f32": "float32", "i64": "int64",
		"flag": "bool", "bytes": "[]byte",
	}[k]
	return t, ok
}

func parseBinding(src string, op *Op) (*Binding, error) {
	src = strings.TrimSpace(src)
	b := &Binding{op: op}
	if i := strings.Index(src, "="); i >= 0 && i < strings.Index(src, "(") {
		name := strings.TrimSpace(src[:i])
		if !isPath(name) || strings.Contains(name, ".") {
			return nil, fmt.Errorf("%q: a launch's name must be a Go identifier", name)
		}
		b.Func = "launch" + strings.ToUpper(name[:1]) + name[1:]
		src = strings.TrimSpace(src[i+1:])
	}
	open := strings.Index(src, "(")
	if open < 0 || !strings.HasSuffix(src, ")") {
		return nil, fmt.Errorf("%q: want kernel(args)", src)
	}
	for _, k := range strings.Split(src[:open], "|") {
		b.Kernels = append(b.Kernels, strings.TrimSpace(k))
	}
	if b.Func == "" {
		if len(b.Kernels) > 1 {
			return nil, fmt.Errorf("%s: kernels %v need a name", src[:open], b.Kernels)
		}
		b.Func = "launch" + camel(strings.TrimRight(b.Kernels[0], "*_"))
	}
	for _, a := range splitTop(src[open+1 : len(src)-1]) {
		ka, err := b.arg(strings.TrimSpace(a))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Kernels[0], err)
		}
		b.Args = append(b.Args, ka)
	}
	return b, nil
}

func camel(s string) string {
	var b strings.Builder
	for _, p := range strings.Split(s, "_") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

// one is a KArg of one value.
func one(src, kind, val string) *KArg {
	return &KArg{Src: src, Kinds: []string{kind}, Go: []string{kind + "(" + val + ")"}}
}

func (b *Binding) arg(s string) (*KArg, error) {
	switch {
	case s == "err":
		return one(s, "ptr", "c.b.errDev"), nil
	case s == "nil":
		return one(s, "ptr", "0"), nil
	case strings.HasPrefix(s, "$"):
		name, kind, ok := strings.Cut(s[1:], ":")
		if _, known := goKind(kind); !ok || !known || !isPath(name) || strings.Contains(name, ".") {
			return nil, fmt.Errorf("%s: want $name:kind", s)
		}
		ka := one(s, kind, name)
		ka.Extra = name
		return ka, nil
	}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		expr, kind := s[:i], s[i+1:]
		if _, known := goKind(kind); !known {
			return nil, fmt.Errorf("%s: unknown kind %s", s, kind)
		}
		v, err := b.rewrite(expr)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", s, err)
		}
		return one(s, kind, convert(kind, v)), nil
	}
	if b.op == nil {
		return nil, fmt.Errorf("%s: a helper kernel's value must be $name:kind", s)
	}
	return b.path(s)
}

// convert turns a value of unknown type into the argPack method's.
func convert(kind, v string) string {
	switch kind {
	case "ptr", "flag", "bytes":
		return v
	case "i32":
		return "int(" + v + ")"
	}
	t, _ := goKind(kind)
	return t + "(" + v + ")"
}

// rewrite prefixes the op's parameters in a Go expression with a. (the
// launch's view of the checked arguments).
func (b *Binding) rewrite(expr string) (string, error) {
	x, err := parser.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	if b.op == nil {
		return "", fmt.Errorf("a helper kernel has no arguments to refer to")
	}
	var fix func(n ast.Expr) ast.Expr
	fix = func(n ast.Expr) ast.Expr {
		switch t := n.(type) {
		case *ast.Ident:
			if a := b.op.arg(t.Name); a != nil && a.isParam() {
				return &ast.SelectorExpr{X: ast.NewIdent("a"), Sel: ast.NewIdent(t.Name)}
			}
		case *ast.SelectorExpr:
			t.X = fix(t.X)
		case *ast.CallExpr:
			t.Fun = fix(t.Fun)
			for i := range t.Args {
				t.Args[i] = fix(t.Args[i])
			}
		case *ast.BinaryExpr:
			t.X, t.Y = fix(t.X), fix(t.Y)
		case *ast.ParenExpr:
			t.X = fix(t.X)
		case *ast.UnaryExpr:
			t.X = fix(t.X)
		}
		return n
	}
	var out bytes.Buffer
	if err := format.Node(&out, token.NewFileSet(), fix(x)); err != nil {
		return "", err
	}
	return out.String(), nil
}

// blockField maps a Block's fields to the CUDA view (blockArgs): the
// value's kind and its expression on the view.
func blockField(f string) (kind, val string, ok bool) {
	v, ok := map[string][2]string{
		"NumDst": {"ptr", "nd"}, "NumEdges": {"ptr", "ne"}, "NumSrc": {"ptr", "ns"},
		"NumDst.Cap": {"i32", "dstCap"}, "NumEdges.Cap": {"i32", "edgeCap"}, "NumSrc.Cap": {"i32", "srcCap"},
		"Indptr": {"ptr", "indptr.addr()"}, "Indices": {"ptr", "indices.addr()"},
	}[f]
	return v[0], v[1], ok
}

// path resolves a value named by a parameter or a field of one.
func (b *Binding) path(s string) (*KArg, error) {
	root, rest, dotted := strings.Cut(s, ".")
	p := b.op.arg(root)
	if p == nil || !p.isParam() {
		return nil, fmt.Errorf("%s: no parameter %s", s, root)
	}
	if dotted {
		if f := b.op.arg(s); f != nil {
			return b.value(s, f)
		}
		if strings.HasSuffix(s, ".Cap") {
			if f := b.op.arg(strings.TrimSuffix(s, ".Cap")); f != nil && f.kind().goType == "Count" {
				return one(s, "i32", "a."+s), nil
			}
		}
	}
	switch k := p.kind(); {
	case !dotted:
		return b.value(s, p)
	case k.goType == "Count" && rest == "Cap":
		return one(s, "i32", "a."+s), nil
	case p.Type == "Block":
		if kind, val, ok := blockField(rest); ok {
			return one(s, kind, "a."+root+"."+val), nil
		}
	case p.Type == "Rand":
		switch rest {
		case "Seed":
			return one(s, "i64", "int64(a."+root+".seed)"), nil
		case "Clock":
			return one(s, "ptr", "a."+root+".clock"), nil
		case "Stream":
			return one(s, "u32", "a."+root+".stream"), nil
		case "Key":
			return &KArg{Src: s, Kinds: []string{"u32", "u32"}, Go: []string{"u32(a." + root + ".k0)", "u32(a." + root + ".k1)"}}, nil
		}
	}
	return nil, fmt.Errorf("%s: not a value a kernel takes (check the field, or write it as expr:kind)", s)
}

// value is the launch value of a checked argument (a parameter or field).
func (b *Binding) value(s string, a *Arg) (*KArg, error) {
	f := "a." + a.field()
	k := a.kind()
	switch {
	case k.buffer || a.Type == "Flag":
		return one(s, "ptr", f+".addr()"), nil
	case k.goType == "Count":
		return one(s, "ptr", f+"P"), nil
	case a.Type == "Rand":
		return &KArg{Src: s, Kinds: []string{"u32", "u32", "ptr", "u32"},
			Go: []string{"u32(" + f + ".k0)", "u32(" + f + ".k1)", "ptr(" + f + ".clock)", "u32(" + f + ".stream)"}}, nil
	case a.Type == "int":
		return one(s, "i32", f), nil
	case a.Type == "int32":
		return one(s, "i32", "int("+f+")"), nil
	case a.Type == "float32":
		return one(s, "f32", f), nil
	case a.Type == "bool":
		return one(s, "flag", f), nil
	}
	return nil, fmt.Errorf("%s: a %s is not a kernel value (name one of its fields)", s, a.Type)
}

// kinds are the kernel parameter kinds the binding fills, in order.
func (b *Binding) kinds() []string {
	var out []string
	for _, a := range b.Args {
		out = append(out, a.Kinds...)
	}
	return out
}

// compatible reports whether a launch value of kind go fills a kernel
// parameter of kind c.
func compatible(goK, c string) bool {
	switch goK {
	case "flag":
		return c == "i32" || c == "bool"
	case "bytes":
		return c == "struct"
	}
	return goK == c
}

// verify checks the binding against the kernels' signatures.
func (b *Binding) verify(ks map[string]*Kernel) error {
	var matched []*Kernel
	for _, name := range b.Kernels {
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			var family []*Kernel
			for n, k := range ks {
				if strings.HasPrefix(n, prefix) {
					family = append(family, k)
				}
			}
			sort.Slice(family, func(i, j int) bool { return family[i].Name < family[j].Name })
			matched = append(matched, family...)
			if len(matched) == 0 {
				return fmt.Errorf("%s: no kernel named %s*", b.Func, prefix)
			}
			continue
		}
		k, ok := ks[name]
		if !ok {
			return fmt.Errorf("%s: no kernel %s in the kernel sources", b.Func, name)
		}
		matched = append(matched, k)
	}
	want := b.kinds()
	for _, k := range matched {
		if len(k.Params) != len(want) {
			return fmt.Errorf("%s: kernel %s (%s) takes %d parameters, the launch passes %d (%s)",
				b.Func, k.Name, k.File, len(k.Params), len(want), strings.Join(want, ", "))
		}
		for i, c := range k.Params {
			if !compatible(want[i], c) {
				return fmt.Errorf("%s: kernel %s (%s): parameter %d is %s, the launch passes %s (%s)",
					b.Func, k.Name, k.File, i+1, c, want[i], b.source(i))
			}
		}
	}
	return nil
}

// source names the description's arg that fills kernel parameter i.
func (b *Binding) source(i int) string {
	for _, a := range b.Args {
		if i < len(a.Kinds) {
			return a.Src
		}
		i -= len(a.Kinds)
	}
	return "?"
}

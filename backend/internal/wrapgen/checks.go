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
	"unicode"
)

// The checkers: for each op, package cpu and package cuda get a struct of
// the checked arguments (the op's views: slices on the CPU, device
// buffers and addresses on CUDA) and a method of their call type that
// checks every argument in the description's order and fills the struct.
// The backends' helpers (c.f32, c.buf, c.count, ...) record the first
// failure, naming the op and the argument, and do nothing after one.

// result is the checkers' result variable; no parameter may be called so.
const result = "ck"

// renameCB renames the parameters called c and b, the checkers' call
// and receiver.
func renameCB(s string) string {
	switch s {
	case "c":
		return "cc"
	case "b":
		return "bb"
	}
	return s
}

// lowerFirst is s with its first word lower-case: Gather is gather,
// GCNWeights gcnWeights.
func lowerFirst(s string) string {
	n := 1
	for n < len(s) && unicode.IsUpper(rune(s[n])) && (n+1 == len(s) || unicode.IsUpper(rune(s[n+1]))) {
		n++
	}
	return strings.ToLower(s[:n]) + s[n:]
}

// argsType is the name of an op's struct of checked arguments.
func (op *Op) argsType() string { return lowerFirst(op.Name) + "Args" }

// checkFunc is the name of an op's checker.
func (op *Op) checkFunc() string { return "check" + op.Name }

// renameExpr renames the parameters of op in a Go expression.
func (op *Op) renameExpr(e string, rename func(string) string) string {
	x, err := parser.ParseExpr(e)
	if err != nil {
		return e
	}
	ast.Inspect(x, func(n ast.Node) bool {
		switch t := n.(type) {
		case *ast.SelectorExpr:
			// Only the leftmost name of a selector can be a parameter.
			ast.Inspect(t.X, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok {
					if a := op.arg(id.Name); a != nil && a.isParam() {
						id.Name = rename(id.Name)
					}
				}
				return true
			})
			return false
		case *ast.Ident:
			if a := op.arg(t.Name); a != nil && a.isParam() {
				t.Name = rename(t.Name)
			}
		}
		return true
	})
	var b bytes.Buffer
	if err := format.Node(&b, token.NewFileSet(), x); err != nil {
		return e
	}
	return b.String()
}

// field is one member of an op's struct.
type field struct{ name, typ string }

// viewFields are the members a checked argument adds to its op's struct
// in package pkg.
func viewFields(pkg string, a *Arg) []field {
	f := a.field()
	k := a.kind()
	cpu := pkg == "cpu"
	// The view of each kind: on the CPU, then on CUDA.
	views := map[string][2]string{
		"F32": {"[]float32", "*buffer"}, "I32": {"[]int32", "*buffer"}, "I64": {"[]int64", "*buffer"},
		"U8": {"[]uint8", "*buffer"}, "Flag": {"bool", "*buffer"}, "Rand": {"rng.Key", "randArgs"},
		"Block": {"blockView", "blockArgs"}, "Graph": {"*cpuGraph", "*devGraph"},
	}
	side := 1
	if cpu {
		side = 0
	}
	switch v, ok := views[a.Type]; {
	case ok:
		return []field{{f, v[side]}}
	case k.buffer:
		return []field{{f, "*buffer"}}
	case a.Type == "Count" && cpu:
		return []field{{f, "int"}, {f + "P", "*int32"}}
	case a.Type == "Count" && a.isParam():
		return []field{{f, "backend.Count"}, {f + "P", "uintptr"}}
	case a.Type == "Count":
		return []field{{f + "P", "uintptr"}}
	case a.Type == "Counter" && cpu:
		return []field{{f + "P", "*int32"}}
	case a.Type == "Counter":
		return []field{{f + "P", "uintptr"}}
	case !a.isParam() || cpu:
		// A scalar field is checked, not kept; the CPU's bodies read the
		// scalars and values from their parameters.
		return nil
	}
	return []field{{f, goType(a, true)}}
}

// cpuHelper is the CPU backend's checker of an exact buffer type.
func cpuHelper(typ string) string {
	return map[string]string{"F32": "f32", "I32": "i32", "I64": "i64", "U8": "u8"}[typ]
}

// statement renders the check of one line of op's args in package pkg.
func (op *Op) statement(pkg string, a *Arg) string {
	r := func(e string) string { return op.renameExpr(e, renameCB) }
	var guards []string
	if a.Require != "" {
		return fmt.Sprintf("if c.ok && !(%s) {\n c.failf(%s)\n}\n", r(a.Require), r(a.Else))
	}
	if a.Check != "" {
		guards = append(guards, "c.ok")
		if a.Cond != "" {
			guards = append(guards, "("+r(a.Cond)+")")
		}
		return wrap(guards, fmt.Sprintf("c.check(%s)\n", r(a.Check)))
	}
	x := r(a.Name)
	name := fmt.Sprintf("%q", a.Name)
	f := result + "." + a.field()
	k := a.kind()
	var body string
	shape := "0"
	if a.Shape != "" {
		shape = r(a.Shape)
	}
	unsafe := op.unsafeExpr(a.Shape) || op.unsafeExpr(a.Cond) || strings.HasPrefix(a.Type, "dtype(") && op.unsafeExpr(k.dtypes)
	switch {
	case k.buffer && strings.HasPrefix(a.Type, "dtype("):
		body = fmt.Sprintf("%s = c.buf(%s, %s, %s, %s)\n", f, name, x, r(k.dtypes), shape)
	case k.buffer && strings.Contains(a.Type, "|"):
		body = fmt.Sprintf("%s = c.typed(%s, %s, %s, %s)\n", f, name, x, shape, k.dtypes)
	case k.buffer && pkg == "cpu" && cpuHelper(a.Type) != "":
		body = fmt.Sprintf("%s = c.%s(%s, %s, %s)\n", f, cpuHelper(a.Type), name, x, shape)
	case k.buffer:
		body = fmt.Sprintf("%s = c.buf(%s, %s, %s, %s)\n", f, name, x, k.dtypes, shape)
	case a.Type == "Count" && pkg == "cpu":
		body = fmt.Sprintf("%s, %sP = c.count(%s, %s)\n", f, f, name, x)
	case a.Type == "Count":
		body = fmt.Sprintf("%sP = c.count(%s, %s)\n", f, name, x)
		if a.isParam() {
			body = fmt.Sprintf("%s = %s\n", f, x) + body
		}
	case a.Type == "Counter":
		body = fmt.Sprintf("%sP = c.counter(%s, %s)\n", f, name, x)
	case a.Type == "Flag":
		body = fmt.Sprintf("%s = c.flag(%s, %s)\n", f, name, x)
	case a.Type == "Rand":
		body = fmt.Sprintf("%s = c.rand(%s, %s)\n", f, name, x)
	case a.Type == "Block":
		body = fmt.Sprintf("%s = c.block(%s, %s)\n", f, name, x)
	case a.Type == "*Block" && pkg == "cpu":
		body = fmt.Sprintf("c.notNil(%s, %s)\n", name, x)
	case a.Type == "*Block":
		body = fmt.Sprintf("c.notNil(%s, %s)\n%s = %s\n", name, x, f, x)
	case a.Type == "Graph":
		body = fmt.Sprintf("%s = c.graph(%s, %s)\n", f, name, x)
	default: // scalars and values
		if a.isParam() && pkg != "cpu" {
			body = fmt.Sprintf("%s = %s\n", f, x)
		}
		for _, m := range a.Mods {
			body += fmt.Sprintf("c.check(backend.%s(%s, %s))\n", modCheck(m), name, x)
		}
	}
	if unsafe {
		guards = append(guards, "c.ok")
	}
	if a.Opt {
		guards = append(guards, fmt.Sprintf("!isNil(%s)", x))
	}
	if a.Cond != "" {
		guards = append(guards, "("+r(a.Cond)+")")
	}
	return wrap(guards, body)
}

// modCheck is the shared check (backend/check.go) of a modifier.
func modCheck(m string) string {
	return map[string]string{">0": "CheckDim", ">=0": "CheckSize", "prob": "CheckProb", "not-nan": "CheckNumber"}[m]
}

func wrap(guards []string, body string) string {
	if len(guards) == 0 || body == "" {
		return body
	}
	return fmt.Sprintf("if %s {\n%s}\n", strings.Join(guards, " && "), body)
}

// checker renders op's struct and checker for package pkg.
func (op *Op) checker(b *bytes.Buffer, pkg string) error {
	for _, p := range op.params {
		if renameCB(p.Name) == result {
			return fmt.Errorf("wrapgen: %s: a parameter may not be called %s", op.Name, result)
		}
	}
	iface := "backend." + op.file.Interface
	fmt.Fprintf(b, "\n// %s are %s's arguments as %s returns them.\ntype %s struct {\n", op.argsType(), op.Name, op.checkFunc(), op.argsType())
	writeFields(b, op.fields(pkg))
	b.WriteString("}\n")
	fmt.Fprintf(b, "\n// %s begins a call of %s (%s) and checks its arguments:\n"+
		"// the first failure is recorded, naming the op and the argument, and\n// leaves the views after it empty. The caller must defer c.end().\n",
		op.checkFunc(), op.Name, iface)
	fmt.Fprintf(b, "func (b *Backend) %s(%s) (c call, %s %s) {\n", op.checkFunc(), op.signature(true, renameCB), result, op.argsType())
	fmt.Fprintf(b, "c = b.begin(%q)\n", op.Name)
	for _, a := range op.checks {
		if a.group != nil {
			b.WriteString(op.groupCall(pkg, a))
			continue
		}
		b.WriteString(op.statement(pkg, a))
	}
	fmt.Fprintf(b, "return c, %s\n}\n", result)
	return nil
}

// Checks writes package pkg's (cpu or cuda) file of checkers for the ops
// of f, and for cuda their kernel launches.
func (s *Spec) Checks(pkg string, f *File, ks map[string]*Kernel) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header("backend/ops/" + f.Name + ".yaml"))
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	var body bytes.Buffer
	for _, g := range f.Groups {
		g.render(&body, pkg)
	}
	for _, op := range f.Ops {
		if op.Results != "" {
			continue
		}
		if err := op.checker(&body, pkg); err != nil {
			return nil, err
		}
		if pkg != "cuda" {
			continue
		}
		for _, bd := range op.bindings {
			if err := bd.render(&body, ks); err != nil {
				return nil, err
			}
		}
	}
	if pkg == "cuda" {
		for _, bd := range f.kernels {
			if err := bd.render(&body, ks); err != nil {
				return nil, err
			}
		}
	}
	var imports []string
	if bytes.Contains(body.Bytes(), []byte("math.")) {
		imports = append(imports, `"math"`, "")
	}
	if bytes.Contains(body.Bytes(), []byte("backend.")) {
		imports = append(imports, `"github.com/fanout-gnn/fanout/backend"`)
	}
	if bytes.Contains(body.Bytes(), []byte("rng.")) {
		imports = append(imports, `"github.com/fanout-gnn/fanout/rng"`)
	}
	switch len(imports) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "import %s\n", imports[0])
	default:
		fmt.Fprintf(&b, "import (\n%s\n)\n", strings.Join(imports, "\n"))
	}
	b.Write(body.Bytes())
	return formatGo(pkg+"/"+f.Name+"_gen.go", b.Bytes())
}

// render writes the launch method of a binding after verifying it.
func (bd *Binding) render(b *bytes.Buffer, ks map[string]*Kernel) error {
	if err := bd.verify(ks); err != nil {
		return fmt.Errorf("wrapgen: %v", err)
	}
	var params []string
	if bd.op != nil {
		params = append(params, "a *"+bd.op.argsType())
	}
	if bd.variant() {
		params = append(params, "name string")
	}
	var names []string
	for i, a := range bd.Args {
		if a.Extra == "" {
			continue
		}
		t, _ := goKind(a.Kinds[0])
		for _, reserved := range []string{"a", "c", "name", "grid", "block", "smem"} {
			if a.Extra == reserved {
				return fmt.Errorf("wrapgen: %s: a value may not be called $%s", bd.Func, a.Extra)
			}
		}
		names = append(names, a.Extra)
		if next := bd.nextExtra(i); next == nil || next.Kinds[0] != a.Kinds[0] {
			params = append(params, strings.Join(names, ", ")+" "+t)
			names = nil
		}
	}
	params = append(params, "grid, block dim3", "smem int")
	var calls []string
	for _, a := range bd.Args {
		calls = append(calls, a.Go...)
	}
	kernel := fmt.Sprintf("%q", bd.Kernels[0])
	what := bd.Kernels[0]
	if bd.variant() {
		kernel = "name"
		what = "one of " + strings.Join(bd.Kernels, ", ")
	}
	files := bd.files(ks)
	fmt.Fprintf(b, "\n// %s launches %s (%s)", bd.Func, what, files)
	if bd.op != nil {
		fmt.Fprintf(b, "\n// with %s's checked arguments,", bd.op.Name)
	} else {
		b.WriteString(",\n//")
	}
	b.WriteString(" its parameters in the kernel's order.\n")
	fmt.Fprintf(b, "func (c *call) %s(%s) {\n", bd.Func, strings.Join(params, ", "))
	b.WriteString("c.args()")
	width := len("\tc.args()")
	for _, call := range calls {
		if width+1+len(call) > 110 {
			b.WriteString(".\n\t\t")
			width = 2 * 4
		} else {
			b.WriteString(".")
			width++
		}
		b.WriteString(call)
		width += len(call)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "c.launch(%s, grid, block, smem)\n}\n", kernel)
	return nil
}

// nextExtra is the $value after argument i that is the launch's next
// parameter, or nil.
func (bd *Binding) nextExtra(i int) *KArg {
	if i+1 < len(bd.Args) && bd.Args[i+1].Extra != "" {
		return bd.Args[i+1]
	}
	return nil
}

// files names the kernel files a binding's kernels are in.
func (bd *Binding) files(ks map[string]*Kernel) string {
	seen := map[string]bool{}
	var out []string
	for _, k := range ks {
		for _, name := range bd.Kernels {
			p, fam := strings.CutSuffix(name, "*")
			if (fam && strings.HasPrefix(k.Name, p) || k.Name == name) && !seen[k.File] {
				seen[k.File] = true
				out = append(out, "kernels/"+k.File)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

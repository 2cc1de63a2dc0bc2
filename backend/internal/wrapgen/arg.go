package wrapgen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"strings"
	"unicode"
)

// Arg is one line of an op's args: a parameter of the method, a field of
// one to check (r.Keys, blk.SrcIDs), or a check of its own.
//
//	NAME TYPE [SHAPE] MODIFIERS... [if COND]
//	check EXPR [if COND]             EXPR is an error (nil: fine)
//	require COND else FORMAT, ARGS   a failure when COND is false
//	use GROUP                        the lines of a group (see Group)
//
// SHAPE is the least number of elements of a buffer, a Go expression over
// the parameters (n.Cap*(1+k), blk.NumSrc.Cap*dim, param.Len()); COND is a
// Go condition over them. MODIFIERS: nil-ok (a buffer that may be nil), >0
// (an int in [1, 2^31)), >=0 (an int in [0, 2^31)), prob (a probability in
// [0, 1)), not-nan (a float32).
type Arg struct {
	Name    string
	Type    string // a kind of types below
	Shape   string
	Cond    string
	Opt     bool
	Mods    []string
	Check   string // check EXPR
	Require string // require COND
	Else    string // its failure: a format and arguments

	group *Group // the group the line is written in, or nil
}

// kind is what a type token means to the generators.
type kind struct {
	goType string // the parameter's type in package backend ("Buffer", "*Block", "int")
	buffer bool   // a buffer checked for dtype and length
	dtypes string // Go expression(s) of the dtypes, for buffers
	scalar bool   // a plain value: int, int32, float32, bool
	value  bool   // a backend struct passed by value, not checked itself
}

// kinds maps a type token to its kind; ok is false for unknown tokens.
func kinds(tok string) (kind, bool) {
	switch tok {
	case "F32", "I32", "I64", "U8", "BF16":
		return kind{goType: "Buffer", buffer: true, dtypes: "backend." + tok}, true
	case "F32|BF16":
		return kind{goType: "Buffer", buffer: true, dtypes: "backend.F32, backend.BF16"}, true
	case "F32|I32|BF16":
		return kind{goType: "Buffer", buffer: true, dtypes: "backend.F32, backend.I32, backend.BF16"}, true
	case "Count", "Counter":
		return kind{goType: "Count"}, true
	case "Flag":
		return kind{goType: "Buffer"}, true
	case "Rand":
		return kind{goType: "Rand"}, true
	case "Block", "*Block":
		return kind{goType: "*Block"}, true
	case "Graph":
		return kind{goType: "Graph"}, true
	case "int", "int32", "float32", "bool":
		return kind{goType: tok, scalar: true}, true
	case "Transposed", "ActGrad", "AdamConfig":
		return kind{goType: tok, value: true}, true
	}
	if strings.HasPrefix(tok, "dtype(") && strings.HasSuffix(tok, ")") {
		return kind{goType: "Buffer", buffer: true, dtypes: tok[len("dtype(") : len(tok)-1]}, true
	}
	return kind{}, false
}

func (a *Arg) kind() kind {
	k, _ := kinds(a.Type)
	return k
}

// isParam reports whether the line is a parameter of the method.
func (a *Arg) isParam() bool {
	return a.Check == "" && a.Require == "" && !strings.Contains(a.Name, ".")
}

// field is the name of a's view in the generated structs: r.Keys is rKeys.
func (a *Arg) field() string {
	parts := strings.Split(a.Name, ".")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

func parseArg(line string) (*Arg, error) {
	line = strings.TrimSpace(line)
	body, cond := line, ""
	if i := strings.Index(line, " if "); i >= 0 {
		body, cond = strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+4:])
		if err := checkExpr(cond); err != nil {
			return nil, fmt.Errorf("if %s: %v", cond, err)
		}
	}
	switch {
	case strings.HasPrefix(body, "check "):
		e := strings.TrimSpace(body[len("check "):])
		if err := checkExpr(e); err != nil {
			return nil, fmt.Errorf("check %s: %v", e, err)
		}
		return &Arg{Check: e, Cond: cond}, nil
	case strings.HasPrefix(line, "require "):
		rest := strings.TrimSpace(line[len("require "):])
		i := strings.Index(rest, " else ")
		if i < 0 {
			return nil, fmt.Errorf("require %s: no else", rest)
		}
		a := &Arg{Require: strings.TrimSpace(rest[:i]), Else: strings.TrimSpace(rest[i+6:])}
		if err := checkExpr(a.Require); err != nil {
			return nil, fmt.Errorf("require %s: %v", a.Require, err)
		}
		if _, err := parser.ParseExpr("f(" + a.Else + ")"); err != nil {
			return nil, fmt.Errorf("else %s: %v", a.Else, err)
		}
		return a, nil
	}
	fields := strings.Fields(body)
	if len(fields) < 2 {
		return nil, fmt.Errorf("%q: want NAME TYPE", line)
	}
	a := &Arg{Name: fields[0], Type: fields[1], Cond: cond}
	if !isPath(a.Name) {
		return nil, fmt.Errorf("%q: bad name", a.Name)
	}
	k, ok := kinds(a.Type)
	if !ok {
		return nil, fmt.Errorf("%s: unknown type %s", a.Name, a.Type)
	}
	rest := strings.TrimSpace(body[len(fields[0]):])
	rest = strings.TrimSpace(rest[len(fields[1]):])
	if strings.HasPrefix(rest, "[") {
		end := matching(rest)
		if end < 0 {
			return nil, fmt.Errorf("%s: unclosed shape", a.Name)
		}
		a.Shape = strings.TrimSpace(rest[1:end])
		rest = rest[end+1:]
		if !k.buffer {
			return nil, fmt.Errorf("%s: a shape on a %s", a.Name, a.Type)
		}
		if err := checkExpr(a.Shape); err != nil {
			return nil, fmt.Errorf("%s: shape %s: %v", a.Name, a.Shape, err)
		}
	}
	if err := a.modifiers(k, strings.Fields(rest)); err != nil {
		return nil, err
	}
	return a, nil
}

// modifiers sets a's modifiers, each allowed on some kinds only.
func (a *Arg) modifiers(k kind, mods []string) error {
	for _, m := range mods {
		switch m {
		case "nil-ok":
			if !k.buffer {
				return fmt.Errorf("%s: nil-ok on a %s", a.Name, a.Type)
			}
			a.Opt = true
		case ">0", ">=0":
			if a.Type != "int" {
				return fmt.Errorf("%s: %s on a %s", a.Name, m, a.Type)
			}
			a.Mods = append(a.Mods, m)
		case "prob", "not-nan":
			if a.Type != "float32" {
				return fmt.Errorf("%s: %s on a %s", a.Name, m, a.Type)
			}
			a.Mods = append(a.Mods, m)
		default:
			return fmt.Errorf("%s: unknown modifier %q", a.Name, m)
		}
	}
	return nil
}

// matching returns the index of the bracket closing s[0], or -1.
func matching(s string) int {
	depth := 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isPath reports whether s is an identifier or a dotted path of them.
func isPath(s string) bool {
	for _, p := range strings.Split(s, ".") {
		if p == "" || !(unicode.IsLetter(rune(p[0])) || p[0] == '_') {
			return false
		}
		for _, r := range p {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
				return false
			}
		}
	}
	return true
}

func checkExpr(e string) error {
	_, err := parser.ParseExpr(e)
	return err
}

// refs returns the root identifiers an expression reaches through a
// selector or a call (x in x.Len(), blk in blk.NumSrc.Cap): the values it
// dereferences.
func refs(e string) []string {
	x, err := parser.ParseExpr(e)
	if err != nil {
		return nil
	}
	var out []string
	ast.Inspect(x, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			for {
				inner, ok := s.X.(*ast.SelectorExpr)
				if !ok {
					break
				}
				s = inner
			}
			if id, ok := s.X.(*ast.Ident); ok {
				out = append(out, id.Name)
			}
		}
		return true
	})
	return out
}

// deps are the parameters a line of args needs checked before it: those
// its shape, condition, type or check names, and a field's parameter.
func (op *Op) deps(a *Arg) []string {
	var out []string
	add := func(e string) {
		if e == "" {
			return
		}
		x, err := parser.ParseExpr(e)
		if err != nil {
			return
		}
		ast.Inspect(x, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				ast.Inspect(s.X, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok {
						out = append(out, id.Name)
					}
					return true
				})
				return false
			}
			if id, ok := n.(*ast.Ident); ok {
				out = append(out, id.Name)
			}
			return true
		})
	}
	add(a.Shape)
	add(a.Cond)
	add(a.Check)
	add(a.Require)
	if strings.HasPrefix(a.Type, "dtype(") {
		add(a.kind().dtypes)
	}
	if a.Name != "" && !a.isParam() {
		out = append(out, strings.Split(a.Name, ".")[0])
	}
	var params []string
	for _, d := range out {
		if p := op.arg(d); p != nil && p.isParam() && d != a.Name {
			params = append(params, d)
		}
	}
	return params
}

// order returns the lines of args in the order they are checked: as
// written, except that a line waits for the parameters it depends on
// (deps), so a shape may use a later parameter and a type an earlier
// buffer's.
func (op *Op) order() ([]*Arg, error) {
	done := map[string]bool{}
	pending := append([]*Arg(nil), op.checks...)
	var out []*Arg
	// A parameter counts as checked once all its lines are.
	left := map[string]int{}
	for _, a := range pending {
		if a.isParam() {
			left[a.Name]++
		}
	}
	for len(pending) > 0 {
		progress := false
		for i := 0; i < len(pending); i++ {
			a := pending[i]
			ready := true
			for _, d := range op.deps(a) {
				if !done[d] {
					ready = false
					break
				}
			}
			if !ready {
				continue
			}
			out = append(out, a)
			pending = append(pending[:i], pending[i+1:]...)
			if a.isParam() {
				if left[a.Name]--; left[a.Name] == 0 {
					done[a.Name] = true
				}
			}
			progress = true
			break
		}
		if !progress {
			return nil, fmt.Errorf("the checks of %s depend on each other in a cycle", pending[0].describe())
		}
	}
	return out, nil
}

// describe names a line of args in an error.
func (a *Arg) describe() string {
	switch {
	case a.Check != "":
		return "check " + a.Check
	case a.Require != "":
		return "require " + a.Require
	}
	return a.Name
}

// unsafeExpr reports whether e dereferences a parameter that may be nil
// (a buffer, a block, a graph): it must then wait until the checks before
// it have passed.
func (op *Op) unsafeExpr(e string) bool {
	for _, r := range refs(e) {
		if a := op.arg(r); a != nil && a.isParam() {
			switch a.kind().goType {
			case "Buffer", "*Block", "Graph":
				return true
			}
		}
	}
	return false
}

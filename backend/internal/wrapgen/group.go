package wrapgen

import (
	"bytes"
	"fmt"
	"strings"
)

// Group is a run of args lines that several ops of a file share (a
// block with its edge weights, the attention scores with their dropout),
// written once under groups: and named in an op's args as
//
//	use NAME
//
// Its lines are the op's at that place: the method's parameters, their
// order and the order of the checks are as if written out. Each backend
// gets the group's checks once, as a method of its call type filling a
// struct of the group's views that the ops' structs embed. A group's
// lines may refer only to its own parameters, and an op that uses it must
// check them together, in the group's order.
type Group struct {
	Name string   `yaml:"name"`
	Doc  string   `yaml:"doc"`
	Args []string `yaml:"args"`

	op    *Op // the lines and parameters, resolved as an op's
	users []string
}

// argsType is the name of the group's struct of checked arguments.
func (g *Group) argsType() string { return g.Name + "Args" }

// checkFunc is the name of the group's checker.
func (g *Group) checkFunc() string { return "check" + strings.ToUpper(g.Name[:1]) + g.Name[1:] }

// parseGroups parses f's groups into ops of their lines.
func (f *File) parseGroups() error {
	for i, g := range f.Groups {
		if g.Name == "" || !isPath(g.Name) || strings.Contains(g.Name, ".") || strings.ToLower(g.Name[:1]) != g.Name[:1] {
			return fmt.Errorf("groups[%d]: name %q: want a Go identifier in lower camel case", i, g.Name)
		}
		if g.Doc == "" {
			return fmt.Errorf("group %s: doc: missing", g.Name)
		}
		g.op = &Op{Name: g.Name, file: f}
		if err := g.op.parseArgs(g.Args, nil); err != nil {
			return fmt.Errorf("group %s: %v", g.Name, err)
		}
		for _, a := range g.op.checks {
			a.group = g
		}
	}
	return nil
}

// group returns f's group called name, or nil.
func (f *File) group(name string) *Group {
	for _, g := range f.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// resolveGroups resolves f's groups as ops and checks that each is used
// and named apart from the ops' structs and checkers.
func (f *File) resolveGroups(s *Spec) error {
	for _, g := range f.Groups {
		if err := g.op.resolve(); err != nil {
			return fmt.Errorf("wrapgen: %s: group %s: %v", f.Name, g.Name, err)
		}
		if len(g.users) == 0 {
			return fmt.Errorf("wrapgen: %s: group %s is used by no op", f.Name, g.Name)
		}
		for _, other := range s.Files {
			for _, op := range other.Ops {
				if op.argsType() == g.argsType() {
					return fmt.Errorf("wrapgen: %s: group %s is named as op %s", f.Name, g.Name, op.Name)
				}
			}
		}
	}
	return nil
}

// checkGroups verifies, after ordering, that op checks each group it uses
// as one run in the group's order, over the group's parameters only.
func (op *Op) checkGroups() error {
	for i := 0; i < len(op.checks); i++ {
		g := op.checks[i].group
		if g == nil {
			continue
		}
		for j, a := range g.op.checks {
			if i+j >= len(op.checks) || op.checks[i+j] != a {
				return fmt.Errorf("the lines of group %s are not checked together in its order "+
					"(a line of the op depends on one of the group's parameters, or the group on the op's)", g.Name)
			}
			for _, d := range op.deps(a) {
				if p := g.op.arg(d); p == nil || !p.isParam() {
					return fmt.Errorf("group %s: %s refers to %s, not a parameter of the group", g.Name, a.describe(), d)
				}
			}
		}
		i += len(g.op.checks) - 1
	}
	return nil
}

// fields are the members of group g's struct in package pkg.
func (g *Group) fields(pkg string) []field {
	return g.op.fields(pkg)
}

// fields are the members of op's struct in package pkg: each checked
// argument's views, once, and a group's struct embedded in its stead.
func (op *Op) fields(pkg string) []field {
	seen := map[string]bool{}
	var out []field
	for _, a := range op.checks {
		if a.Check != "" || a.Require != "" {
			continue
		}
		fs := viewFields(pkg, a)
		if g := a.group; g != nil && g.op != op {
			fs = nil
			if len(g.fields(pkg)) > 0 {
				fs = []field{{name: g.argsType()}}
			}
		}
		for _, f := range fs {
			if !seen[f.name] {
				seen[f.name] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// groupCall renders the check of the group whose first line is a, in the
// checker of op; the group's other lines render nothing.
func (op *Op) groupCall(pkg string, a *Arg) string {
	g := a.group
	if g.op.checks[0] != a {
		return ""
	}
	call := fmt.Sprintf("c.%s(%s)\n", g.checkFunc(), g.op.callArgs(renameCB))
	if len(g.fields(pkg)) == 0 {
		return call
	}
	return result + "." + g.argsType() + " = " + call
}

// render writes group g's struct and checker for package pkg.
func (g *Group) render(b *bytes.Buffer, pkg string) {
	fields := g.fields(pkg)
	results := ""
	if len(fields) > 0 {
		fmt.Fprintf(b, "\n// %s are the views of the arguments of group %s, as %s returns them.\ntype %s struct {\n",
			g.argsType(), g.Name, g.checkFunc(), g.argsType())
		writeFields(b, fields)
		b.WriteString("}\n")
		results = fmt.Sprintf(" (%s %s)", result, g.argsType())
	}
	b.WriteString("\n")
	comment(b, "", wrapText(g.checkFunc()+" checks the arguments of group "+g.Name+" in the call c, as the checkers of "+
		strings.Join(g.users, ", ")+" do.", 76)+"\n"+strings.TrimRight(g.Doc, "\n"))
	fmt.Fprintf(b, "func (c *call) %s(%s)%s {\n", g.checkFunc(), g.op.signature(true, renameCB), results)
	for _, a := range g.op.checks {
		b.WriteString(g.op.statement(pkg, a))
	}
	if results != "" {
		fmt.Fprintf(b, "return %s\n", result)
	}
	b.WriteString("}\n")
}

// writeFields writes the members of a struct: a field with no type is an
// embedded struct.
func writeFields(b *bytes.Buffer, fields []field) {
	for _, f := range fields {
		if f.typ == "" {
			fmt.Fprintf(b, "\t%s\n", f.name)
			continue
		}
		fmt.Fprintf(b, "\t%s %s\n", f.name, f.typ)
	}
}

// wrapText breaks text into lines of at most width bytes between words.
func wrapText(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

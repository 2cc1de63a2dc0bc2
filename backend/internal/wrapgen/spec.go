package wrapgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Spec is every op description: the files of backend/ops, one per
// interface or capability, in the order of Order.
type Spec struct {
	Files []*File
}

// File is one interface (or capability) of ops: its doc comment, the
// interfaces it embeds, its ops, and the kernels and error codes that are
// not one op's (helpers several ops launch, codes of other capabilities).
type File struct {
	Name string `yaml:"-"` // the file's stem: ops/link.yaml is "link"
	// Interface is the interface's name; a file without one holds only
	// kernels and error codes of code that is not an op's.
	Interface string `yaml:"interface"`
	// Capability is set on an interface found by type assertion (the
	// wrappers declare it); What names it in the error of <Interface>Of
	// when a backend lacks it.
	Capability bool       `yaml:"capability"`
	What       string     `yaml:"what"`
	Of         string     `yaml:"of"` // the function's name, when not <Interface>Of
	Embeds     []string   `yaml:"embeds"`
	Doc        string     `yaml:"doc"`
	Ops        []*Op      `yaml:"ops"`
	Kernels    []string   `yaml:"kernels"`
	Errors     []*ErrCode `yaml:"errors"`
	Groups     []*Group   `yaml:"groups"`

	kernels []*Binding
	// capability is the capability an interface that is not one belongs
	// to when a capability embeds it (its ops are reached through that
	// capability), else "".
	capability string
}

// Op is one method of an interface.
type Op struct {
	Name string `yaml:"name"`
	Doc  string `yaml:"doc"`
	// Before is a comment that stands above the method, apart from its doc.
	Before string `yaml:"before"`
	// Results, when set (e.g. "(Graph, error)"), makes the method one that
	// is written by hand in every backend and wrapper: only the interface
	// method is generated.
	Results string     `yaml:"results"`
	Args    []string   `yaml:"args"`
	Errors  []*ErrCode `yaml:"errors"`
	CUDA    []string   `yaml:"cuda"`

	file     *File
	checks   []*Arg // every line of Args, in order
	params   []*Arg // the method's parameters, in order
	bindings []*Binding
}

// ErrCode is an error a kernel reports through the device's error record
// (code and three int32 values), with the message the Go side formats.
type ErrCode struct {
	Name    string `yaml:"name"`    // the kernels' macro without ERR_: "LINK_EDGE"
	Code    int    `yaml:"code"`    // the value the kernels write
	Message string `yaml:"message"` // a format of up to three %d values (a, b, c)
	Op      string `yaml:"op"`      // the op named in the message; an op's own codes leave it empty
}

// Load reads every description file of dir (backend/ops).
func Load(dir string) (*Spec, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("wrapgen: no op descriptions in %s", dir)
	}
	sort.Strings(names)
	s := &Spec{}
	for _, name := range names {
		f, err := loadFile(name)
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, f)
	}
	if err := s.resolve(); err != nil {
		return nil, err
	}
	return s, nil
}

func loadFile(name string) (*File, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	f := &File{Name: strings.TrimSuffix(filepath.Base(name), ".yaml")}
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	switch {
	case f.Interface == "" && (len(f.Ops) > 0 || f.Capability || f.Doc != ""):
		return nil, fmt.Errorf("%s: interface: missing", name)
	case f.Capability && f.What == "":
		return nil, fmt.Errorf("%s: what: missing (the capability's name in errors)", name)
	}
	if err := f.parseGroups(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for i, op := range f.Ops {
		op.file = f
		if op.Name == "" {
			return nil, fmt.Errorf("%s: ops[%d]: name: missing", name, i)
		}
		if err := op.parseArgs(op.Args, f); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", name, op.Name, err)
		}
	}
	return f, nil
}

// parseArgs parses the lines of op's args, a group's (use NAME) from
// groups of f, into its checks and parameters.
func (op *Op) parseArgs(lines []string, f *File) error {
	declared := map[string]bool{}
	add := func(a *Arg) {
		op.checks = append(op.checks, a)
		if a.isParam() && !declared[a.Name] {
			declared[a.Name] = true
			op.params = append(op.params, a)
		}
	}
	for j, line := range lines {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "use "); ok {
			var g *Group
			if f != nil {
				g = f.group(strings.TrimSpace(name))
			}
			if g == nil {
				return fmt.Errorf("args[%d]: %s: no such group", j, line)
			}
			g.users = append(g.users, op.Name)
			for _, a := range g.op.checks {
				add(a)
			}
			continue
		}
		a, err := parseArg(line)
		if err != nil {
			return fmt.Errorf("args[%d]: %v", j, err)
		}
		add(a)
	}
	return nil
}

// resolve checks the description as a whole: unique names and codes,
// known types, fields of known parameters, and the CUDA bindings.
func (s *Spec) resolve() error {
	seen := map[string]string{}
	for _, f := range s.Files {
		if f.Interface == "" {
			continue
		}
		if prev, dup := seen[f.Interface]; dup {
			return fmt.Errorf("wrapgen: interface %s described in %s and %s", f.Interface, prev, f.Name)
		}
		seen[f.Interface] = f.Name
	}
	ops := map[string]bool{}
	for _, f := range s.Files {
		if err := f.resolveGroups(s); err != nil {
			return err
		}
		for _, e := range f.Embeds {
			if _, ok := seen[e]; !ok {
				return fmt.Errorf("wrapgen: %s embeds %s, which is not described", f.Interface, e)
			}
			if f.Capability {
				if g := s.file(e); !g.Capability {
					g.capability = f.Interface
				}
			}
		}
		for _, op := range f.Ops {
			if ops[op.Name] {
				return fmt.Errorf("wrapgen: op %s described twice", op.Name)
			}
			ops[op.Name] = true
			if err := op.resolve(); err != nil {
				return fmt.Errorf("wrapgen: %s.%s: %v", f.Interface, op.Name, err)
			}
		}
		for _, k := range f.Kernels {
			b, err := parseBinding(k, nil)
			if err != nil {
				return fmt.Errorf("wrapgen: %s: kernels: %v", f.Name, err)
			}
			f.kernels = append(f.kernels, b)
		}
	}
	codes := map[int]string{}
	names := map[string]bool{}
	for _, e := range s.codes() {
		if prev, dup := codes[e.Code]; dup {
			return fmt.Errorf("wrapgen: error code %d is both %s and %s", e.Code, prev, e.Name)
		}
		if names[e.Name] {
			return fmt.Errorf("wrapgen: error name %s used twice", e.Name)
		}
		if e.Code <= 0 || e.Op == "" || e.Message == "" {
			return fmt.Errorf("wrapgen: error %s: want a positive code, an op and a message", e.Name)
		}
		if _, err := verbs(e.Message); err != nil {
			return fmt.Errorf("wrapgen: error %s: %v", e.Name, err)
		}
		codes[e.Code], names[e.Name] = e.Name, true
	}
	return nil
}

func (op *Op) resolve() error {
	if op.Results != "" {
		if len(op.CUDA) > 0 || len(op.Errors) > 0 {
			return fmt.Errorf("a hand-written method (results %s) has no kernels or codes here", op.Results)
		}
	}
	byName := map[string]*Arg{}
	for _, a := range op.checks {
		if a.Check != "" || a.Require != "" {
			continue
		}
		if prev, dup := byName[a.Name]; dup {
			// Alternatives: one argument checked one way or another.
			if prev.Cond == "" || a.Cond == "" || prev.Type != a.Type && a.kind().goType != prev.kind().goType {
				return fmt.Errorf("%s listed twice (alternatives need a condition each and one type)", a.Name)
			}
			continue
		}
		if !a.isParam() {
			root := strings.Split(a.Name, ".")[0]
			p, ok := byName[root]
			if !ok || !p.isParam() {
				return fmt.Errorf("%s: a field of %s, which is not an earlier parameter", a.Name, root)
			}
		}
		byName[a.Name] = a
	}
	for _, e := range op.Errors {
		if e.Op != "" && e.Op != op.Name {
			return fmt.Errorf("error %s names op %s", e.Name, e.Op)
		}
		e.Op = op.Name
	}
	order, err := op.order()
	if err != nil {
		return err
	}
	op.checks = order
	if err := op.checkGroups(); err != nil {
		return err
	}
	for _, k := range op.CUDA {
		b, err := parseBinding(k, op)
		if err != nil {
			return fmt.Errorf("cuda: %v", err)
		}
		op.bindings = append(op.bindings, b)
	}
	return nil
}

// arg returns the checked argument called name (a parameter or a field).
func (op *Op) arg(name string) *Arg {
	for _, a := range op.checks {
		if a.Name == name && a.Check == "" && a.Require == "" {
			return a
		}
	}
	return nil
}

// codes returns every error code: the ops' and the files' own.
func (s *Spec) codes() []*ErrCode {
	var out []*ErrCode
	for _, f := range s.Files {
		for _, op := range f.Ops {
			out = append(out, op.Errors...)
		}
		out = append(out, f.Errors...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Ops returns every op that the wrappers forward and the backends check:
// methods without results, sorted by name.
func (s *Spec) Ops() []*Op {
	var out []*Op
	for _, f := range s.Files {
		for _, op := range f.Ops {
			if op.Results == "" {
				out = append(out, op)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Capabilities returns the interfaces described as capabilities, in file order.
func (s *Spec) Capabilities() []string {
	var out []string
	for _, f := range s.Files {
		if f.Capability {
			out = append(out, f.Interface)
		}
	}
	return out
}

// Iface is the capability an op belongs to (its own interface's, or that
// of the capability that embeds it), "" for the required ones.
func (op *Op) Iface() string {
	if op.file.Capability {
		return op.file.Interface
	}
	return op.file.capability
}

// file is the file that describes interface name (nil if none does).
func (s *Spec) file(name string) *File {
	for _, f := range s.Files {
		if f.Interface == name {
			return f
		}
	}
	return nil
}

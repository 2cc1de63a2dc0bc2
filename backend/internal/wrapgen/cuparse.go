package wrapgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Kernel is the signature of one extern "C" __global__ function of the
// kernel sources: its file and the kinds of its parameters (ptr, i32, u32,
// f32, i64, f64, bool or struct), as a launch must pass them.
type Kernel struct {
	Name   string
	File   string
	Params []string
}

// macro is a #define: its parameters (nil for an object-like macro) and body.
type macro struct {
	params []string
	body   string
}

// cuSyntax holds the patterns the reader matches.
type cuSyntax struct {
	define *regexp.Regexp // a #define line (continuations joined)
	kernel *regexp.Regexp // the start of a kernel, up to its name and "("
	ident  *regexp.Regexp
	paste  *regexp.Regexp // ## and the space around it
}

func newSyntax() *cuSyntax {
	return &cuSyntax{
		define: regexp.MustCompile(`^\s*#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$`),
		kernel: regexp.MustCompile(`extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(`),
		ident:  regexp.MustCompile(`[A-Za-z_]\w*`),
		paste:  regexp.MustCompile(`\s*##\s*`),
	}
}

// ReadKernels returns the kernels of every .cu file of dir, by name. The
// sources are read as the kernels are written here: parameter lists may
// use object-like macros (AGG_ARGS), and function-like macros whose body
// declares kernels are expanded where they are invoked at the start of a
// line (HD_GRP(float4, 2, v4_2)), with ## pasting.
func ReadKernels(dir string) (map[string]*Kernel, error) {
	sx := newSyntax()
	headers, err := filepath.Glob(filepath.Join(dir, "*.cuh"))
	if err != nil {
		return nil, err
	}
	shared := map[string]macro{}
	for _, h := range headers {
		src, err := os.ReadFile(h)
		if err != nil {
			return nil, err
		}
		sx.collectMacros(logicalLines(string(src)), shared)
	}
	units, err := filepath.Glob(filepath.Join(dir, "*.cu"))
	if err != nil {
		return nil, err
	}
	sort.Strings(units)
	out := map[string]*Kernel{}
	for _, u := range units {
		src, err := os.ReadFile(u)
		if err != nil {
			return nil, err
		}
		macros := map[string]macro{}
		for k, v := range shared {
			macros[k] = v
		}
		lines := logicalLines(string(src))
		sx.collectMacros(lines, macros)
		text := sx.expandKernelMacros(lines, macros)
		for _, m := range sx.kernel.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			end := closing(text, m[1]-1)
			if end < 0 {
				return nil, fmt.Errorf("%s: kernel %s: unclosed parameter list", filepath.Base(u), name)
			}
			params, err := sx.paramKinds(sx.expandObjects(text[m[1]:end], macros))
			if err != nil {
				return nil, fmt.Errorf("%s: kernel %s: %v", filepath.Base(u), name, err)
			}
			if prev, dup := out[name]; dup {
				return nil, fmt.Errorf("kernel %s is declared in %s and %s", name, prev.File, filepath.Base(u))
			}
			out[name] = &Kernel{Name: name, File: filepath.Base(u), Params: params}
		}
	}
	return out, nil
}

// logicalLines strips comments and joins lines continued with a backslash.
func logicalLines(src string) []string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return strings.Split(b.String(), "\n")
			}
			b.WriteString(strings.Repeat("\n", strings.Count(src[i:i+2+j+2], "\n")))
			i += 2 + j + 1
		case src[i] == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(src[i:min(j+1, len(src))])
			i = j
		default:
			b.WriteByte(src[i])
		}
	}
	joined := strings.ReplaceAll(b.String(), "\\\n", " ")
	return strings.Split(joined, "\n")
}

func (sx *cuSyntax) collectMacros(lines []string, into map[string]macro) {
	for _, l := range lines {
		m := sx.define.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		mc := macro{body: strings.TrimSpace(m[3])}
		if m[2] != "" {
			mc.params = []string{}
			for _, p := range strings.Split(m[2][1:len(m[2])-1], ",") {
				mc.params = append(mc.params, strings.TrimSpace(p))
			}
		}
		into[m[1]] = mc
	}
}

// expandKernelMacros returns the lines that are not directives, with every
// invocation of a function-like macro that declares kernels expanded.
func (sx *cuSyntax) expandKernelMacros(lines []string, macros map[string]macro) string {
	var b strings.Builder
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			b.WriteString("\n")
			continue
		}
		if id := sx.ident.FindString(t); id != "" && strings.HasPrefix(t, id+"(") {
			if mc, ok := macros[id]; ok && mc.params != nil && strings.Contains(mc.body, "__global__") {
				if end := closing(t, len(id)); end > 0 {
					b.WriteString(sx.substitute(mc, splitTop(t[len(id)+1:end])))
					b.WriteString("\n")
					continue
				}
			}
		}
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

// substitute expands one invocation: parameters replaced, ## pasted.
func (sx *cuSyntax) substitute(mc macro, args []string) string {
	vals := map[string]string{}
	for i, p := range mc.params {
		if i < len(args) {
			vals[p] = strings.TrimSpace(args[i])
		}
	}
	s := sx.ident.ReplaceAllStringFunc(mc.body, func(id string) string {
		if v, ok := vals[id]; ok {
			return v
		}
		return id
	})
	return sx.paste.ReplaceAllString(s, "")
}

// expandObjects replaces object-like macros in s until none is left.
func (sx *cuSyntax) expandObjects(s string, macros map[string]macro) string {
	for range 16 {
		changed := false
		s = sx.ident.ReplaceAllStringFunc(s, func(id string) string {
			if mc, ok := macros[id]; ok && mc.params == nil {
				changed = true
				return mc.body
			}
			return id
		})
		if !changed {
			break
		}
	}
	return s
}

// closing returns the index of the parenthesis that closes s[open], or -1.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits s at the commas outside parentheses and brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}

// paramKinds classifies each parameter of a kernel.
func (sx *cuSyntax) paramKinds(list string) ([]string, error) {
	var out []string
	for _, p := range splitTop(list) {
		k, err := sx.cKind(p)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// cKind is the launch kind of one C parameter declaration.
func (sx *cuSyntax) cKind(decl string) (string, error) {
	if strings.Contains(decl, "*") {
		return "ptr", nil
	}
	words := strings.Fields(decl)
	if len(words) < 2 {
		return "", fmt.Errorf("parameter %q has no name", strings.TrimSpace(decl))
	}
	var typ []string
	for _, w := range words[:len(words)-1] {
		switch w {
		case "const", "volatile", "__restrict__":
		default:
			typ = append(typ, w)
		}
	}
	switch t := strings.Join(typ, " "); t {
	case "int", "int32_t":
		return "i32", nil
	case "u32", "unsigned", "unsigned int", "uint32_t":
		return "u32", nil
	case "float":
		return "f32", nil
	case "i64", "u64", "long long", "unsigned long long", "int64_t", "uint64_t", "size_t":
		return "i64", nil
	case "double":
		return "f64", nil
	case "bool":
		return "bool", nil
	default:
		if sx.ident.MatchString(t) && !strings.Contains(t, " ") {
			return "struct", nil
		}
		return "", fmt.Errorf("parameter %q: unknown type %q", strings.TrimSpace(decl), t)
	}
}

package job

// A job's settings come from flags and from a YAML config file whose keys
// are the flags' names; both parse a value by the same rules.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
)

// Register adds a flag for the setting *p under name, with *p as its
// default. Standard kinds use the standard flags (so -h names their types).
func Register(fs *flag.FlagSet, name, usage string, p any) {
	switch p := p.(type) {
	case *string:
		fs.StringVar(p, name, *p, usage)
	case *int:
		fs.IntVar(p, name, *p, usage)
	case *uint64:
		fs.Uint64Var(p, name, *p, usage)
	case *float64:
		fs.Float64Var(p, name, *p, usage)
	case *bool:
		fs.BoolVar(p, name, *p, usage)
	case flag.Value:
		fs.Var(p, name, usage)
	default:
		fs.Var(value{p}, name, usage)
	}
}

// value is a flag over a float32 or []int setting.
type value struct{ p any }

func (v value) String() string {
	switch p := v.p.(type) {
	case *float32:
		return strconv.FormatFloat(float64(*p), 'g', -1, 32)
	case *[]int:
		return train.FormatFanouts(*p)
	case *map[string][]int:
		var parts []string
		for k, f := range *p {
			parts = append(parts, k+"="+train.FormatFanouts(f))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	}
	return ""
}

func (v value) Set(s string) error { return ParseSetting(v.p, s) }

// Shown is a value as an error message shows it: as given, or quoted when
// it holds anything that would break the message's one line; at most
// quote.Limit bytes of it either way.
func Shown(s string) string {
	if s == "" || len(s) > quote.Limit || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return quote.Quote(s)
	}
	return s
}

// ParseSetting parses s into the setting *p: the same rules for a flag and a
// config file's scalar.
func ParseSetting(p any, s string) error {
	switch p := p.(type) {
	case *string:
		*p = s
	case *int:
		v, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if err != nil {
			return fmt.Errorf("%s is not an integer", Shown(s))
		}
		*p = int(v)
	case *uint64:
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return fmt.Errorf("%s is not a non-negative integer", Shown(s))
		}
		*p = v
	case *float32:
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return fmt.Errorf("%s is not a number", Shown(s))
		}
		*p = float32(v)
	case *float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%s is not a number", Shown(s))
		}
		*p = v
	case *bool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%s is not true or false", s)
		}
		*p = v
	case *[]int:
		v, err := ParseFanouts(s)
		if err != nil {
			return err
		}
		*p = v
	case *map[string][]int: // a relation's fanouts, name=list, one per use
		name, list, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return fmt.Errorf("%s: want RELATION=FANOUTS, as writes=10,5", Shown(s))
		}
		v, err := ParseFanouts(list)
		if err != nil {
			return err
		}
		if *p == nil {
			*p = map[string][]int{}
		}
		(*p)[name] = v
	case interface{ Set(string) error }: // a setting that parses itself (train.Mode)
		return p.Set(s)
	default:
		return fmt.Errorf("setting of type %T", p)
	}
	return nil
}

// ParseFanouts reads "15,10,5".
func ParseFanouts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%s is not a list of integers like 15,10,5", quote.Quote(s))
		}
		out = append(out, v)
	}
	return out, nil
}

// PresetConfig is the training configuration a preset defines.
func PresetConfig(p rmat.Preset) train.Config {
	c := train.Defaults()
	c.Layers, c.Hidden, c.Batch = p.Layers, p.Hidden, p.Batch
	c.Fanouts = append([]int(nil), p.Fanouts...)
	c.Dropout, c.LR = p.Dropout, p.LR
	if p.Model != "" {
		c.Model = p.Model // the typed presets' models
	}
	if p.Heads > 0 {
		c.Heads = p.Heads // igbh-sim's RGAT
	}
	return c
}

// ConfigFile is a parsed config file: the YAML value of each key.
type ConfigFile struct {
	path string
	keys map[string]*yaml.Node
}

// ReadConfigFile reads a YAML config file: a mapping whose keys are the
// names in known (the flag names of fanout train). Unknown keys, keys
// given twice and keys only the command line may give (commandLineOnly)
// are errors naming the file, the line and the key.
func ReadConfigFile(path string, known, commandLineOnly []string) (*ConfigFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfigFile(path, b, known, commandLineOnly)
}

// ParseConfigFile parses the text b of the config file at path.
func ParseConfigFile(path string, b []byte, known, commandLineOnly []string) (*ConfigFile, error) {
	fc := &ConfigFile{path: path, keys: map[string]*yaml.Node{}}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fc, nil // an empty file sets nothing
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return fc, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: line %d: want a mapping of keys to values (hidden: 64)", path, root.Line)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		at := fmt.Sprintf("%s: line %d", path, k.Line)
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: a key must be a name", at)
		}
		name := k.Value
		switch {
		case slices.Contains(known, name):
		case slices.Contains(commandLineOnly, name):
			return nil, fmt.Errorf("%s: %s is not a config key; give --%s on the command line", at, quote.Quote(name), name)
		case slices.Contains(known, strings.ReplaceAll(name, "_", "-")):
			return nil, fmt.Errorf("%s: unknown key %s; it is spelled %s, like the flag", at, quote.Quote(name), quote.Quote(strings.ReplaceAll(name, "_", "-")))
		default:
			return nil, fmt.Errorf("%s: unknown key %s (config keys are the flag names of fanout train -h)", at, quote.Quote(name))
		}
		if fc.keys[name] != nil {
			return nil, fmt.Errorf("%s: key %s given twice", at, quote.Quote(name))
		}
		fc.keys[name] = v
	}
	return fc, nil
}

// Has reports whether the file sets the key name.
func (fc *ConfigFile) Has(name string) bool { return fc != nil && fc.keys[name] != nil }

// Decode sets the setting *p to the file's value of the key name, if it
// has one. Errors name the file, line and key.
func (fc *ConfigFile) Decode(name string, p any) error {
	if !fc.Has(name) {
		return nil
	}
	n := fc.keys[name]
	if err := decodeSetting(p, n); err != nil {
		return fmt.Errorf("%s: line %d: %s: %w", fc.path, n.Line, name, err)
	}
	return nil
}

// decodeInts reads a YAML sequence of integers into *p.
func decodeInts(p *[]int, n *yaml.Node) error {
	var out []int
	for _, e := range n.Content {
		var v int
		if e.Kind != yaml.ScalarNode || e.Tag != "!!int" || ParseSetting(&v, e.Value) != nil {
			return fmt.Errorf("%s is not an integer", describe(e))
		}
		out = append(out, v)
	}
	*p = out
	return nil
}

// decodeSetting parses a YAML value into the setting *p. An integer setting
// takes only an integer (16.9 is an error, not 16); a number takes an
// integer or a float; fanouts take a list of integers or "15,10,5".
func decodeSetting(p any, n *yaml.Node) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if fan, ok := p.(*[]int); ok && n.Kind == yaml.SequenceNode {
		return decodeInts(fan, n)
	}
	if rel, ok := p.(*map[string][]int); ok && n.Kind == yaml.MappingNode {
		// A relation's fanouts: name: [10, 5] (or "10,5") per relation.
		out := map[string][]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			var f []int
			if err := decodeSetting(&f, v); err != nil {
				return fmt.Errorf("%s: %w", k.Value, err)
			}
			out[k.Value] = f
		}
		*rel = out
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a single value, not %s", describe(n))
	}
	if n.Tag == "!!null" {
		return errors.New("no value")
	}
	want := ""
	switch p.(type) {
	case *int, *uint64:
		if n.Tag != "!!int" {
			want = "an integer"
		}
	case *float32, *float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			want = "a number"
		}
	case *bool:
		if n.Tag != "!!bool" {
			want = "true or false"
		}
	}
	if want != "" {
		return fmt.Errorf("%s is not %s", Shown(n.Value), want)
	}
	return ParseSetting(p, n.Value)
}

// describe names a YAML value for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return Shown(n.Value)
}

package dataset

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fanout-gnn/fanout/internal/quote"
	"gopkg.in/yaml.v3"
)

// Bounds of a manifest's fields: far above any dataset this package
// reads, and low enough that no array size in bytes overflows.
const (
	MaxNodes      = 1 << 40 // num_nodes, and so each split's size
	MaxEdges      = 1 << 40 // num_edges
	MaxFeatDim    = 1 << 24 // feat_dim
	MaxClasses    = 1 << 24 // num_classes; labels are int32
	maxFeatValues = 1 << 60 // num_nodes × feat_dim, so feat.npy's bytes fit in int64
	maxNameBytes  = 255     // name: a file name's length
	maxTextBytes  = 4096    // source and each preprocessing step
)

// manifestKinds is the YAML type each scalar key must have: integer keys
// hold integers (yaml would truncate 1.5 to 1) and symmetric a boolean
// (true or false, not yes or on). Text keys take any scalar.
var manifestKinds = map[string]string{
	"format_version": "!!int", "num_nodes": "!!int", "num_edges": "!!int", "feat_dim": "!!int",
	"num_classes": "!!int", "num_train": "!!int", "num_valid": "!!int", "num_test": "!!int",
	"symmetric":  "!!bool",
	"link_train": "!!int", "link_valid": "!!int", "link_test": "!!int", "link_negatives": "!!int",
}

// checkKinds checks the parsed document's scalars against kinds (the YAML
// type of each key, at any depth): what the decoder converts silently.
func checkKinds(data []byte, kinds map[string]string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return YAMLError(err, nil)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return checkMapping(doc.Content[0], kinds)
}

// checkMapping checks one mapping's values, those it merges (<<) and the
// mappings in its sequences.
func checkMapping(m *yaml.Node, kinds map[string]string) error {
	m = resolved(m)
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], resolved(m.Content[i+1])
		if key.Value == "<<" && key.Tag == "!!merge" {
			merged := []*yaml.Node{val}
			if val.Kind == yaml.SequenceNode {
				merged = val.Content
			}
			for _, sub := range merged {
				if err := checkMapping(sub, kinds); err != nil {
					return err
				}
			}
			continue
		}
		if val.Kind == yaml.SequenceNode {
			for _, sub := range val.Content {
				if err := checkMapping(sub, kinds); err != nil {
					return err
				}
			}
			continue
		}
		want, ok := kinds[key.Value]
		if !ok || val.Kind != yaml.ScalarNode || val.ShortTag() == want {
			continue
		}
		what := "an integer"
		if want == "!!bool" {
			what = "true or false"
		}
		if val.ShortTag() == "!!null" {
			return fmt.Errorf("line %d: %s has no value, want %s", val.Line, key.Value, what)
		}
		return fmt.Errorf("line %d: %s is %s, want %s", val.Line, key.Value, quote.Quote(val.Value), what)
	}
	return nil
}

// resolved follows an alias to the node it names.
func resolved(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// check validates the manifest fields on their own: each in its range or
// among its known values, the counts consistent with each other.
func (m Manifest) check() error {
	if m.FormatVersion != FormatVersion {
		return fmt.Errorf("format_version is %d, want %d (or %d, a typed dataset's)", m.FormatVersion, FormatVersion, TypedFormatVersion)
	}
	if err := checkText("name", m.Name, maxNameBytes); err != nil {
		return err
	}
	if err := checkText("source", m.Source, maxTextBytes); err != nil {
		return err
	}
	for _, f := range []struct {
		name   string
		v, top int64
	}{
		{"num_nodes", m.NumNodes, MaxNodes}, {"num_edges", m.NumEdges, MaxEdges}, {"feat_dim", int64(m.FeatDim), MaxFeatDim},
		{"num_classes", int64(m.NumClasses), MaxClasses}, {"num_train", m.NumTrain, MaxNodes}, {"num_valid", m.NumValid, MaxNodes},
		{"num_test", m.NumTest, MaxNodes},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s is negative (%d)", f.name, f.v)
		}
		if f.v > f.top {
			return fmt.Errorf("%s is %d, more than the %d this format allows", f.name, f.v, f.top)
		}
	}
	if err := checkSteps(m.Preprocessing); err != nil {
		return err
	}
	if _, err := ParseFeatureDType(m.FeatureDType); err != nil {
		return err
	}
	if err := checkNodeIDsKey(m.NodeIDs); err != nil {
		return err
	}
	if err := m.checkLink(); err != nil {
		return err
	}
	if m.FeatDim == 0 {
		return errors.New("feat_dim is 0 or missing")
	}
	if m.NumClasses == 0 {
		return errors.New("num_classes is 0 or missing")
	}
	if m.NumTrain == 0 {
		return errors.New("num_train is 0 or missing: the train split must not be empty")
	}
	if m.NumNodes > maxFeatValues/int64(m.FeatDim) {
		return fmt.Errorf("num_nodes × feat_dim = %d × %d is more than the %d features this format allows", m.NumNodes, m.FeatDim, int64(maxFeatValues))
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"num_train", m.NumTrain}, {"num_valid", m.NumValid}, {"num_test", m.NumTest}} {
		if f.v > m.NumNodes {
			return fmt.Errorf("%s (%d) exceeds num_nodes (%d)", f.name, f.v, m.NumNodes)
		}
	}
	if sum := m.NumTrain + m.NumValid + m.NumTest; sum > m.NumNodes {
		return fmt.Errorf("num_train + num_valid + num_test = %d + %d + %d = %d exceeds num_nodes (%d): a vertex belongs to one split at most",
			m.NumTrain, m.NumValid, m.NumTest, sum, m.NumNodes)
	}
	return nil
}

// checkText checks a text field: valid UTF-8 on one line, without control
// characters, of at most limit bytes.
func checkText(field, s string, limit int) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is %s, which is not UTF-8 text", field, quote.Quote(s))
	case len(s) > limit:
		return fmt.Errorf("%s is %s, longer than %d bytes", field, quote.Quote(s), limit)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%s is %s, want text on one line without control characters", field, quote.Quote(s))
	}
	return nil
}

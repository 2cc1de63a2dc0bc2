package dataset

import (
	"fmt"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// TypedFormatVersion is the layout of a typed dataset (format_version 2):
//
//	manifest.yaml
//	label.npy, train_idx.npy, valid_idx.npy, test_idx.npy   the target type's
//	types/<type>/feat.npy        [count, feat_dim]; absent for feat_dim 0
//	types/<type>/ids.npy|ids.txt the type's original ids, where imported
//	relations/<src>.<rel>.<dst>/indptr.npy   int64 [count(dst)+1]
//	relations/<src>.<rel>.<dst>/indices.npy  int32 [num_edges], src-local ids
//
// Names hold no '.', so a relation's directory names it unambiguously.
const TypedFormatVersion = 2

// Directories of a typed dataset.
const (
	TypesDir     = "types"
	RelationsDir = "relations"
)

// TypedManifest is a typed dataset's manifest.yaml.
type TypedManifest struct {
	FormatVersion int      `yaml:"format_version"`
	Name          string   `yaml:"name"`
	Source        string   `yaml:"source"`
	Preprocessing []string `yaml:"preprocessing,omitempty,flow"`
	// FeatureDType is how every type's feat.npy holds its features, as
	// Manifest.FeatureDType.
	FeatureDType string `yaml:"feature_dtype,omitempty"`
	// Target names the labelled type: label.npy and the splits are its.
	Target     string          `yaml:"target"`
	NumClasses int             `yaml:"num_classes"`
	NumTrain   int64           `yaml:"num_train"`
	NumValid   int64           `yaml:"num_valid"`
	NumTest    int64           `yaml:"num_test"`
	Types      []TypeEntry     `yaml:"types"`
	Relations  []RelationEntry `yaml:"relations"`
}

// TypeEntry is one vertex type of a typed manifest.
type TypeEntry struct {
	Name    string `yaml:"name"`
	Count   int64  `yaml:"count"`
	FeatDim int    `yaml:"feat_dim"` // 0: no features
	NodeIDs string `yaml:"node_ids,omitempty"`
}

// RelationEntry is one relation of a typed manifest: its source type,
// name, destination type and stored edges.
type RelationEntry struct {
	Src      string `yaml:"src"`
	Name     string `yaml:"name"`
	Dst      string `yaml:"dst"`
	NumEdges int64  `yaml:"num_edges"`
}

// typedKinds is the YAML type of the typed manifest's integer keys, at
// any depth (checkKinds).
var typedKinds = map[string]string{
	"format_version": "!!int", "num_classes": "!!int", "num_train": "!!int", "num_valid": "!!int", "num_test": "!!int",
	"count": "!!int", "feat_dim": "!!int", "num_edges": "!!int",
}

// TypeDir is the directory of a vertex type's files, inside the dataset.
func TypeDir(typ string) string { return filepath.Join(TypesDir, typ) }

// RelationDir is the directory of a relation's files, inside the dataset:
// relations/<src>.<rel>.<dst>.
func RelationDir(src, rel, dst string) string {
	return filepath.Join(RelationsDir, src+"."+rel+"."+dst)
}

// manifestVersion reads format_version from manifest text without
// checking the rest; 0 where it cannot be read.
func manifestVersion(data []byte) int {
	var v struct {
		FormatVersion int `yaml:"format_version"`
	}
	if yaml.Unmarshal(data, &v) != nil {
		return 0
	}
	return v.FormatVersion
}

// ParseTypedManifest decodes a typed dataset's manifest text, as
// ParseManifest decodes a dataset's of one type: unknown keys, a second
// document, values of the wrong type, names that are not names and
// counts out of range or inconsistent with each other are errors naming
// the field, quoting at most quote.Limit bytes of the input.
func ParseTypedManifest(data []byte) (TypedManifest, error) {
	m, err := decodeManifest[TypedManifest](data)
	if err != nil {
		return m, err
	}
	if len(m.Preprocessing) == 0 {
		m.Preprocessing = nil
	}
	if err := checkKinds(data, typedKinds); err != nil {
		return m, err
	}
	return m, m.check()
}

// ReadTypedManifest reads and parses a typed dataset's manifest file;
// errors name the file.
func ReadTypedManifest(path string) (TypedManifest, error) {
	data, err := readManifestText(path)
	if err != nil {
		return TypedManifest{}, err
	}
	m, err := ParseTypedManifest(data)
	if err != nil {
		return TypedManifest{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// typedManifestOf describes a typed dataset.
func typedManifestOf(d *Dataset) TypedManifest {
	m := TypedManifest{
		FormatVersion: TypedFormatVersion, Name: d.Name, Source: d.Source, Preprocessing: d.Preprocessing,
		FeatureDType: featureDTypeKey(d), NumClasses: d.NumClasses,
		NumTrain: int64(len(d.Train)), NumValid: int64(len(d.Valid)), NumTest: int64(len(d.Test)),
	}
	if d.Target >= 0 && d.Target < len(d.Types) {
		m.Target = d.Types[d.Target].Name
	}
	for _, t := range d.Types {
		e := TypeEntry{Name: t.Name, Count: t.Count, FeatDim: t.FeatDim}
		if t.IDs != nil {
			e.NodeIDs = t.IDs.file()
		}
		m.Types = append(m.Types, e)
	}
	for _, r := range d.Relations {
		e := RelationEntry{Name: r.Name, Src: typeName(d.Types, r.Src), Dst: typeName(d.Types, r.Dst)}
		if r.Graph != nil {
			e.NumEdges = r.Graph.NumEdges()
		}
		m.Relations = append(m.Relations, e)
	}
	return m
}

// typeName is the name of types[i], or "" where i is out of range.
func typeName(types []VertexType, i int) string {
	if i < 0 || i >= len(types) {
		return ""
	}
	return types[i].Name
}

// marshal renders the manifest as YAML with a leading comment.
func (m TypedManifest) marshal() ([]byte, error) {
	body, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append([]byte("# fanout typed dataset: per-type arrays under types/, per-relation graphs under relations/\n"), body...), nil
}

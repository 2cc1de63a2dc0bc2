package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fanout-gnn/fanout/dtype"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// File names inside a dataset directory.
const (
	ManifestFile = "manifest.yaml"
	IndptrFile   = "indptr.npy"  // int64 [num_nodes+1]
	IndicesFile  = "indices.npy" // int32 [num_edges] (int64 from 2^31 vertices)
	FeatFile     = "feat.npy"    // float32 [num_nodes, feat_dim]; uint16 bfloat16 bits with feature_dtype: bfloat16
	LabelFile    = "label.npy"   // int32 [num_nodes], -1 = unlabelled
	TrainFile    = "train_idx.npy"
	ValidFile    = "valid_idx.npy"
	TestFile     = "test_idx.npy"
)

// FormatVersion is the dataset layout this package writes and reads.
const FormatVersion = 1

// files lists every file a dataset directory holds.
var files = append([]string{ManifestFile, IndptrFile, IndicesFile, FeatFile, LabelFile, TrainFile, ValidFile, TestFile, IDsFile, IDNamesFile}, linkFiles...)

// Manifest is the content of manifest.yaml: what the arrays must hold.
type Manifest struct {
	FormatVersion int    `yaml:"format_version"`
	Name          string `yaml:"name"`
	Source        string `yaml:"source"` // free text: "rmat tiny seed 1", "ogb ogbn-arxiv"
	NumNodes      int64  `yaml:"num_nodes"`
	NumEdges      int64  `yaml:"num_edges"` // stored (directed) edges
	Symmetric     bool   `yaml:"symmetric"` // every edge is stored in both directions
	FeatDim       int    `yaml:"feat_dim"`
	NumClasses    int    `yaml:"num_classes"`
	NumTrain      int64  `yaml:"num_train"`
	NumValid      int64  `yaml:"num_valid"`
	NumTest       int64  `yaml:"num_test"`
	// Preprocessing lists the transforms applied to the source data, in
	// order: symmetrize, drop-self-loops, dedup-edges, normalize-features,
	// or free text.
	Preprocessing []string `yaml:"preprocessing,omitempty,flow"`
	// FeatureDType is how feat.npy holds the features: float32 (<f4; also
	// when absent) or bfloat16 (<u2 bit patterns: numpy has no bfloat16).
	FeatureDType string `yaml:"feature_dtype,omitempty"`
	// NodeIDs names the file of the vertices' original ids (ids.go):
	// ids.npy or ids.txt; absent where the vertices have no other ids.
	NodeIDs string `yaml:"node_ids,omitempty"`
	// Link keys: the pairs of a link task's arrays (link.go) and the fixed
	// negatives per held-out edge; absent without a link task.
	LinkTrain     int64 `yaml:"link_train,omitempty"`
	LinkValid     int64 `yaml:"link_valid,omitempty"`
	LinkTest      int64 `yaml:"link_test,omitempty"`
	LinkNegatives int   `yaml:"link_negatives,omitempty"`
}

// maxManifestBytes bounds what ReadManifest accepts.
const maxManifestBytes = 1 << 20

// ParseManifest decodes manifest text. Unknown keys, a second YAML document,
// a value of the wrong type (1.5 for a count, yes for symmetric), an
// unsupported format_version or feature_dtype, counts out of range or
// inconsistent with each other and text that is not one line are errors;
// they name the field and quote at most quote.Limit bytes of the input.
func ParseManifest(data []byte) (Manifest, error) {
	if manifestVersion(data) == TypedFormatVersion {
		return Manifest{}, fmt.Errorf("format_version is %d: a typed dataset (types and relations), which this reader does not take", TypedFormatVersion)
	}
	m, err := decodeManifest[Manifest](data)
	if err != nil {
		return m, err
	}
	if len(m.Preprocessing) == 0 {
		m.Preprocessing = nil
	}
	if err := checkKinds(data, manifestKinds); err != nil {
		return m, err
	}
	return m, m.check()
}

// decodeManifest decodes manifest text into a T: one YAML document whose
// keys are all T's (or its lists' elements').
func decodeManifest[T any](data []byte) (T, error) {
	var m T
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		if errors.Is(err, io.EOF) {
			return m, errors.New("empty manifest")
		}
		return m, YAMLError(err, unknownKey)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return m, errors.New("more than one YAML document")
	}
	return m, nil
}

// unknownKey words yaml's unknown field (of any of the manifests'
// structs) as an unknown key.
func unknownKey(e string) string {
	if i := strings.LastIndex(e, " not found in type dataset."); i >= 0 {
		if at, key, ok := strings.Cut(e[:i], "field "); ok {
			return fmt.Sprintf("%sunknown key %s", at, quote.Quote(key))
		}
	}
	return e
}

// ReadManifest reads and parses a manifest file; errors name the file. A
// typed dataset's manifest is refused (ReadTypedManifest reads it).
func ReadManifest(path string) (Manifest, error) {
	data, err := readManifestText(path)
	if err != nil {
		return Manifest{}, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readManifestText reads a manifest file of at most maxManifestBytes.
func readManifestText(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxManifestBytes)
	}
	return data, nil
}

// IsTyped reports whether the manifest file at path describes a typed
// dataset (format_version 2), without checking the rest of it.
func IsTyped(path string) (bool, error) {
	data, err := readManifestText(path)
	if err != nil {
		return false, err
	}
	return manifestVersion(data) == TypedFormatVersion, nil
}

// manifestOf describes a dataset.
func manifestOf(d *Dataset) Manifest {
	m := Manifest{
		FormatVersion: FormatVersion,
		Name:          d.Name,
		Source:        d.Source,
		NumNodes:      d.Graph.NumNodes,
		NumEdges:      d.Graph.NumEdges(),
		Symmetric:     d.Symmetric,
		FeatDim:       d.FeatDim,
		NumClasses:    d.NumClasses,
		NumTrain:      int64(len(d.Train)),
		NumValid:      int64(len(d.Valid)),
		NumTest:       int64(len(d.Test)),
		Preprocessing: d.Preprocessing,
		FeatureDType:  featureDTypeKey(d),
		NodeIDs:       nodeIDsKey(d),
	}
	linkKeys(&m, d)
	return m
}

// featureDTypeKey is the feature_dtype a manifest records for d: absent
// for float32, so a float32 dataset's manifest is as it always was.
func featureDTypeKey(d *Dataset) string {
	if d.FeatureDType() == dtype.BF16 {
		return DTypeBFloat16
	}
	return ""
}

// manifestText is a manifest as written: YAML with a leading comment.
type manifestText interface{ marshal() ([]byte, error) }

// marshal renders the manifest as YAML with a leading comment.
func (m Manifest) marshal() ([]byte, error) {
	body, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append([]byte("# fanout dataset: arrays are .npy files next to this manifest\n"), body...), nil
}

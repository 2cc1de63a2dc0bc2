// Package graphbolt imports a dataset in DGL's GraphBolt on-disk layout
// (OnDiskDataset): a directory whose metadata.yaml describes the graph
// (its vertex count and edge files, CSV or numpy), the feature data (.npy
// files of node features) and the tasks, whose train, validation and test
// sets are numpy arrays of seed vertices and their labels. Homogeneous
// graphs only. The parts DGL keeps only as PyTorch files (format: torch,
// the preprocessed FusedCSCSamplingGraph .pt topology) are refused, naming
// the entry.
package graphbolt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/dataset"
	"gopkg.in/yaml.v3"
)

// MetadataFile is the name of the layout's description in its directory.
const MetadataFile = "metadata.yaml"

// metadata is metadata.yaml: the raw layout (graph) or the preprocessed
// one (graph_topology); fields fanout does not use are ignored.
type metadata struct {
	Name     string        `yaml:"dataset_name"`
	Graph    *graphData    `yaml:"graph"`
	Topology *topology     `yaml:"graph_topology"`
	Features []featureData `yaml:"feature_data"`
	Tasks    []task        `yaml:"tasks"`
}

// graphData is the raw graph: vertex counts and edge files, per type.
type graphData struct {
	Nodes []nodeCount `yaml:"nodes"`
	Edges []edgeFile  `yaml:"edges"`
}

// nodeCount is one vertex type of the raw graph ("" for a graph of one).
type nodeCount struct {
	Type string `yaml:"type"`
	Num  int64  `yaml:"num"`
}

// edgeFile is one edge type's file ("src:rel:dst"; "" for one type).
type edgeFile struct {
	Type   string `yaml:"type"`
	Format string `yaml:"format"`
	Path   string `yaml:"path"`
}

// topology is the preprocessed graph, a PyTorch file.
type topology struct {
	Type string `yaml:"type"`
	Path string `yaml:"path"`
}

// featureData is one feature_data entry.
type featureData struct {
	Domain string `yaml:"domain"`
	Type   string `yaml:"type"`
	Name   string `yaml:"name"`
	Format string `yaml:"format"`
	Path   string `yaml:"path"`
}

// task is one entry of tasks.
type task struct {
	Name       string   `yaml:"name"`
	NumClasses int      `yaml:"num_classes"`
	Train      []tvtSet `yaml:"train_set"`
	Validation []tvtSet `yaml:"validation_set"`
	Test       []tvtSet `yaml:"test_set"`
}

// tvtSet is one type's part of a train, validation or test set.
type tvtSet struct {
	Type string    `yaml:"type"`
	Data []setData `yaml:"data"`
}

// setData is one array of a set: seeds, labels, ...
type setData struct {
	Name   string `yaml:"name"`
	Format string `yaml:"format"`
	Path   string `yaml:"path"`
}

// maxMetadata bounds metadata.yaml, in bytes (DGL's are a few kilobytes).
const maxMetadata = 16 << 20

// readMetadata reads and parses dir's metadata.yaml.
func readMetadata(dir string) (*metadata, error) {
	path := filepath.Join(dir, MetadataFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s: not a GraphBolt on-disk dataset", dir, MetadataFile)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, maxMetadata+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(text) > maxMetadata {
		return nil, fmt.Errorf("%s: more than %d bytes: not a GraphBolt metadata file", path, maxMetadata)
	}
	m, err := parseMetadata(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return m, nil
}

// parseMetadata parses metadata.yaml's text and checks its paths
// (checkPaths). Errors name metadata.yaml.
func parseMetadata(text []byte) (*metadata, error) {
	var m metadata
	if err := yaml.Unmarshal(text, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", MetadataFile, dataset.YAMLError(err, nil))
	}
	if err := m.checkPaths(); err != nil {
		return nil, err
	}
	return &m, nil
}

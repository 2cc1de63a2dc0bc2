package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// Files of a dataset's original vertex ids (NodeIDs), one of the two, named
// by the manifest's node_ids key.
const (
	IDsFile     = "ids.npy" // int64 [num_nodes]: the original id of vertex v
	IDNamesFile = "ids.txt" // num_nodes lines: the original (string) id of vertex v on line v+1
)

// NodeIDs are the ids a vertex had in the data it was imported from (an
// edge list's ids, remapped to the dense ids 0..n-1 of the graph): vertex v
// was Ints[v] or Strings[v]. One of the two is set.
type NodeIDs struct {
	Ints    []int64  // [num_nodes]
	Strings []string // [num_nodes]; none holds a line break
}

// Len is the number of ids.
func (ids *NodeIDs) Len() int64 {
	if ids.Strings != nil {
		return int64(len(ids.Strings))
	}
	return int64(len(ids.Ints))
}

// file is the dataset file that holds the ids.
func (ids *NodeIDs) file() string {
	if ids.Strings != nil {
		return IDNamesFile
	}
	return IDsFile
}

// validateIDs checks d.IDs, when set: one id per vertex, string ids on one
// line each.
func (d *Dataset) validateIDs() error {
	return checkIDs(d.IDs, d.Graph.NumNodes, "num_nodes", "")
}

// checkIDs checks ids, when set, of n vertices (count names n for
// messages) whose file lies in the dataset's directory dir ("" for its
// top).
func checkIDs(ids *NodeIDs, n int64, count, dir string) error {
	if ids == nil {
		return nil
	}
	if (ids.Ints == nil) == (ids.Strings == nil) {
		return fileErr(ManifestFile, "node ids: want integer or string ids, one of the two")
	}
	if ids.Len() != n {
		return fileErr(filepath.Join(dir, ids.file()), "%d ids, want %s = %d", ids.Len(), count, n)
	}
	for v, s := range ids.Strings {
		if strings.ContainsAny(s, "\n\r") {
			return fileErr(filepath.Join(dir, IDNamesFile), "the id of vertex %d holds a line break", v)
		}
	}
	return nil
}

// writeIDs writes d.IDs, when set, into dir.
func writeIDs(dir string, d *Dataset) error { return writeNodeIDs(dir, d.IDs) }

// writeNodeIDs writes ids, when set, into dir (ids.npy or ids.txt).
func writeNodeIDs(dir string, ids *NodeIDs) error {
	switch {
	case ids == nil:
		return nil
	case ids.Strings != nil:
		return writeSynced(filepath.Join(dir, IDNamesFile), func(f *os.File) error {
			w := bufio.NewWriterSize(f, 1<<20)
			for _, s := range ids.Strings {
				w.WriteString(s)
				w.WriteByte('\n')
			}
			return w.Flush()
		})
	default:
		return writeSynced(filepath.Join(dir, IDsFile), func(f *os.File) error {
			return npy.Write(f, ids.Ints, []int64{int64(len(ids.Ints))})
		})
	}
}

// ReadIDs reads the original vertex ids of the dataset directory dir, or
// returns nil where its manifest names none (a dataset not imported from an
// edge list). They are read on demand, not by Open: only results keyed by
// the original ids need them. Of a typed dataset they are the target
// type's (ReadTypeIDs).
func ReadIDs(dir string) (*NodeIDs, error) {
	path := filepath.Join(dir, ManifestFile)
	typed, err := IsTyped(path)
	if err != nil {
		return nil, err
	}
	if typed {
		m, err := ReadTypedManifest(path)
		if err != nil {
			return nil, err
		}
		return ReadTypeIDs(dir, m.Target)
	}
	m, err := ReadManifest(path)
	if err != nil || m.NodeIDs == "" {
		return nil, err
	}
	return readIDsFile(filepath.Join(dir, m.NodeIDs), m.NumNodes, "num_nodes")
}

// ReadTypeIDs reads the original ids of the vertices of type typ of the
// typed dataset in dir, or returns nil where its manifest names none.
func ReadTypeIDs(dir, typ string) (*NodeIDs, error) {
	path := filepath.Join(dir, ManifestFile)
	m, err := ReadTypedManifest(path)
	if err != nil {
		return nil, err
	}
	i := m.typeIndex(typ)
	if i < 0 {
		return nil, fmt.Errorf("%s: no vertex type %s", path, quote.Quote(typ))
	}
	e := m.Types[i]
	if e.NodeIDs == "" {
		return nil, nil
	}
	return readIDsFile(filepath.Join(dir, TypeDir(typ), e.NodeIDs), e.Count, fmt.Sprintf("type %s's count", typ))
}

// readIDsFile reads the ids file at path (ids.npy or ids.txt), which must
// hold n ids (count names n in the manifest).
func readIDsFile(path string, n int64, count string) (_ *NodeIDs, err error) {
	ids := &NodeIDs{}
	if filepath.Base(path) == IDNamesFile {
		ids.Strings, err = readLines(path)
	} else {
		ids.Ints, err = readInt64s(path)
	}
	if err != nil {
		return nil, err
	}
	if ids.Len() != n {
		return nil, fmt.Errorf("%s: %d ids, but %s says %s = %d", path, ids.Len(), ManifestFile, count, n)
	}
	return ids, nil
}

// readLines reads a text file's lines, without their line breaks.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lines, nil
}

// readInt64s reads a 1-D int64 .npy file.
func readInt64s(path string) ([]int64, error) {
	data, shape, closer, err := npy.Map(path)
	if err != nil {
		return nil, err
	}
	defer closer()
	s, ok := data.([]int64)
	if !ok || len(shape) != 1 {
		descr, _ := npy.Descr(data)
		return nil, fmt.Errorf("%s: dtype %s, shape %s, want int64 [num_nodes]", path, descr, shapeText(shape))
	}
	return append([]int64(nil), s...), nil
}

// checkNodeIDsKey checks the manifest's node_ids key: absent, or one of the
// two ids files.
func checkNodeIDsKey(key string) error {
	switch key {
	case "", IDsFile, IDNamesFile:
		return nil
	}
	return errors.New("node_ids is " + quote.Quote(key) + ", want " + IDsFile + " or " + IDNamesFile)
}

// nodeIDsKey is the node_ids a manifest records for d.
func nodeIDsKey(d *Dataset) string {
	if d.IDs == nil {
		return ""
	}
	return d.IDs.file()
}

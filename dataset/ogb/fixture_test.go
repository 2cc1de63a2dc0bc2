package ogb

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
)

// tinyFiles is a 6-vertex OGB raw folder: 7 directed edges with a self loop
// (2,2) and a duplicate (3,4); 3 features in assorted number formats; labels
// with vertex 5 unlabelled (empty line); split time with 2/1/2 vertices.
func tinyFiles() map[string]string {
	return map[string]string{
		"raw/num-node-list.csv.gz": "6\n",
		"raw/num-edge-list.csv.gz": "7\n",
		"raw/edge.csv.gz":          "0,1\n1,2\n2,2\n3,4\n3,4\n5,0\n4,1\n",
		"raw/node-feat.csv.gz":     "0.5,-1,2e-3\n1,2,3\n 4.25, 5 ,-0.0\n1e2,0.1,7\n-3.5,0,0\n8,9,10\r\n",
		"raw/node-label.csv.gz":    "0\n2\n1.0\n2\n0\n\n",
		"split/time/train.csv.gz":  "0\n1\n",
		"split/time/valid.csv.gz":  "2\n",
		"split/time/test.csv.gz":   "3\n4\n",
	}
}

var (
	tinySrc      = []int64{0, 1, 2, 3, 3, 5, 4}
	tinyDst      = []int64{1, 2, 2, 4, 4, 0, 1}
	tinyFeatures = []float32{0.5, -1, 0.002, 1, 2, 3, 4.25, 5, 0, 100, 0.1, 7, -3.5, 0, 0, 8, 9, 10}
	tinyLabels   = []int32{0, 2, 1, 2, 0, -1}
)

// gz compresses s.
func gz(t testing.TB, s string) []byte { return ogbtest.Gzip(t, s) }

// writeTree writes files (gzip-compressing names ending in .gz) under a new
// folder named root and returns its path.
func writeTree(t testing.TB, root string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), root)
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte(text)
		if filepath.Ext(name) == ".gz" {
			data = gz(t, text)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// npzMember is one array of a test .npz.
type npzMember struct {
	key   string
	data  any
	shape []int64
}

// writeNPZ writes an .npz archive of members to path.
func writeNPZ(t testing.TB, path string, members ...npzMember) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.Create(m.key + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		if err := npy.Write(w, m.data, m.shape); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fanout-gnn/fanout/dataset/npy"
)

// member is one array of a test archive.
type member struct {
	key   string
	data  any
	shape []int64
}

// npzBytes builds an .npz archive (deflate-compressed, as savez_compressed
// writes it) from members.
func npzBytes(t testing.TB, members []member) []byte {
	t.Helper()
	return archiveBytes(t, members, zip.Deflate)
}

// archiveBytes builds an .npz archive of members stored with method.
func archiveBytes(t testing.TB, members []member, method uint16) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.key + ".npy", Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if raw, ok := m.data.(rawNPY); ok {
			_, err = w.Write(raw)
		} else {
			err = npy.Write(w, m.data, m.shape)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeNPZ writes members to dir/name and returns the path.
func writeNPZ(t testing.TB, dir, name string, members []member) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, npzBytes(t, members), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tinyGraph is a 6-vertex graph: entries (0,1) (1,0) duplicate-free, (1,2)
// one way, (2,2) a self loop, (3,4) twice through (4,3), (4,5) stored with
// value 0 (not an edge), (5,0).
func tinyGraph() []member {
	return []member{
		{"adj_indptr", []int32{0, 1, 2, 4, 5, 7, 8}, []int64{7}},
		{"adj_indices", []int32{1, 0, 1, 2, 4, 3, 5, 0}, []int64{8}},
		{"adj_data", []float32{1, 1, 1, 1, 1, 1, 0, 1}, []int64{8}},
		{"adj_shape", []int64{6, 6}, []int64{2}},
	}
}

// tinySparseAttr is a 6x4 sparse feature matrix: row v has value v+1 in
// column v%4 and 0.5 in column 3 for even v.
func tinySparseAttr() []member {
	return []member{
		{"attr_indptr", []int64{0, 2, 3, 5, 6, 8, 9}, []int64{7}},
		{"attr_indices", []int64{0, 3, 1, 2, 3, 3, 0, 3, 1}, []int64{9}},
		{"attr_data", []float64{1, 0.5, 2, 3, 0.5, 4, 5, 0.5, 6}, []int64{9}},
		{"attr_shape", []int64{6, 4}, []int64{2}},
	}
}

// tinyDense is the same matrix as tinySparseAttr, dense.
var tinyDense = []float32{
	1, 0, 0, 0.5,
	0, 2, 0, 0,
	0, 0, 3, 0.5,
	0, 0, 0, 4,
	5, 0, 0, 0.5,
	0, 6, 0, 0,
}

// tinyLabels gives 3 classes, two vertices each.
func tinyLabels() member {
	return member{"labels", []int64{0, 1, 2, 0, 1, 2}, []int64{6}}
}

// tinyArchive is the whole small dataset with sparse features.
func tinyArchive() []member {
	return append(append(tinyGraph(), tinySparseAttr()...), tinyLabels())
}

// without returns ms minus the members named in keys.
func without(ms []member, keys ...string) []member {
	var out []member
	for _, m := range ms {
		keep := true
		for _, k := range keys {
			keep = keep && m.key != k
		}
		if keep {
			out = append(out, m)
		}
	}
	return out
}

// replace returns ms with the member of the same key replaced by r.
func replace(ms []member, r member) []member {
	out := without(ms, r.key)
	return append(out, r)
}

// dotted renames the members of ms from the gnn-benchmark layout to the
// flat-dict layout: adj_indptr becomes adj_matrix.indptr, attr_data
// attr_matrix.data, and so on.
func dotted(ms []member) []member {
	out := make([]member, len(ms))
	for i, m := range ms {
		for _, p := range []string{"adj", "attr"} {
			if rest, ok := strings.CutPrefix(m.key, p+"_"); ok && rest != "matrix" {
				m.key = p + "_matrix." + rest
			}
		}
		out[i] = m
	}
	return out
}

// storedBytes builds an uncompressed archive (np.savez), whose array bytes
// are stored as they are.
func storedBytes(t testing.TB, members []member) []byte {
	t.Helper()
	return archiveBytes(t, members, zip.Store)
}

// rawNPY is a member's whole .npy file, for dtypes npy.Write does not
// write.
type rawNPY []byte

// stringsNPY is a 1-D numpy array of strings as numpy.array(names) saves
// it: dtype <UN, N the longest name, each name UTF-32 padded with zeros.
func stringsNPY(names ...string) rawNPY {
	width := 1
	for _, s := range names {
		width = max(width, utf8.RuneCountInString(s))
	}
	dict := fmt.Sprintf("{'descr': '<U%d', 'fortran_order': False, 'shape': (%d,), }", width, len(names))
	pad := 64 - (10+len(dict)+1)%64
	header := dict + strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	for _, s := range names {
		runes := []rune(s)
		for i := range width {
			var r rune
			if i < len(runes) {
				r = runes[i]
			}
			binary.Write(&b, binary.LittleEndian, uint32(r))
		}
	}
	return b.Bytes()
}

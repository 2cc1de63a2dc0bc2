package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
)

var smallSplit = dataset.SplitOptions{Seed: 7, TrainPerClass: 1, Valid: 1, Test: 2}

func TestImportTiny(t *testing.T) {
	path := writeNPZ(t, t.TempDir(), "tiny.npz", tinyArchive())
	d, err := Import(path, smallSplit)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "tiny" {
		t.Errorf("name %q, want tiny", d.Name)
	}
	g := d.Graph
	// Symmetric edges 0-1, 1-2, 3-4, 5-0; the self loop, the duplicate and
	// the stored zero (4,5) are gone.
	wantPtr := []int64{0, 2, 4, 5, 6, 7, 8}
	wantIdx := []int32{1, 5, 0, 2, 1, 4, 3, 0}
	if !slices.Equal(g.Indptr, wantPtr) || !slices.Equal(g.Indices, wantIdx) {
		t.Errorf("graph indptr %v indices %v, want %v %v", g.Indptr, g.Indices, wantPtr, wantIdx)
	}
	if d.FeatDim != 4 || !slices.Equal(d.Features, tinyDense) {
		t.Errorf("features dim %d %v, want 4 %v", d.FeatDim, d.Features, tinyDense)
	}
	if d.NumClasses != 3 || !slices.Equal(d.Labels, []int32{0, 1, 2, 0, 1, 2}) {
		t.Errorf("labels %v (%d classes)", d.Labels, d.NumClasses)
	}
	train, valid, test, err := dataset.Split(d.Labels, d.NumClasses, smallSplit)
	if err != nil || !slices.Equal(d.Train, train) || !slices.Equal(d.Valid, valid) || !slices.Equal(d.Test, test) {
		t.Errorf("split %v %v %v, want dataset.Split's %v %v %v (%v)", d.Train, d.Valid, d.Test, train, valid, test, err)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestImportDenseAndOneHot(t *testing.T) {
	oneHot := make([]float32, 18)
	for v, c := range []int{0, 1, 2, 0, 1, 2} {
		oneHot[v*3+c] = 1
	}
	ms := append(tinyGraph(),
		member{"attr_matrix", tinyDense, []int64{6, 4}},
		member{"labels", oneHot, []int64{6, 3}})
	path := writeNPZ(t, t.TempDir(), "dense.npz", ms)
	d, err := Import(path, smallSplit)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Features, tinyDense) || !slices.Equal(d.Labels, []int32{0, 1, 2, 0, 1, 2}) {
		t.Errorf("features %v labels %v", d.Features, d.Labels)
	}
	// Sparse one-hot labels give the same; vertex 5 has none (-1).
	ms = append(append(tinyGraph(), tinySparseAttr()...),
		member{"label_indptr", []int32{0, 1, 2, 3, 4, 5, 5}, []int64{7}},
		member{"label_indices", []int32{0, 1, 2, 0, 1}, []int64{5}},
		member{"label_data", []float32{1, 1, 1, 1, 1}, []int64{5}},
		member{"label_shape", []int64{6, 3}, []int64{2}})
	path = writeNPZ(t, t.TempDir(), "sparse.npz", ms)
	d, err = Import(path, dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Labels, []int32{0, 1, 2, 0, 1, -1}) || d.NumClasses != 3 {
		t.Errorf("sparse labels %v (%d classes)", d.Labels, d.NumClasses)
	}
	for _, s := range [][]int64{d.Train, d.Valid, d.Test} {
		if slices.Contains(s, 5) {
			t.Errorf("unlabelled vertex 5 is in a split")
		}
	}
}

func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	good := npzBytes(t, tinyArchive())
	cases := []struct {
		name    string
		file    []byte
		missing bool
		want    string
	}{
		{name: "missing", missing: true, want: "no such file"},
		{name: "truncated", file: good[:len(good)/2], want: "not a readable .npz"},
		{name: "index out of range", file: npzBytes(t, replace(tinyArchive(), member{"adj_indices", []int32{1, 0, 1, 2, 4, 3, 9, 0}, []int64{8}})), want: "adj: indices[6] = 9 is out of range [0, 6)"},
		{name: "negative label", file: npzBytes(t, replace(tinyArchive(), member{"labels", []int64{0, 1, -2, 0, 1, 2}, []int64{6}})), want: "labels[2] = -2 is out of range"},
		{name: "no labels", file: npzBytes(t, without(tinyArchive(), "labels")), want: "no labels"},
		{name: "no features", file: npzBytes(t, without(tinyArchive(), "attr_data", "attr_indices", "attr_indptr", "attr_shape")), want: "no node features"},
		{name: "float ids", file: npzBytes(t, replace(tinyArchive(), member{"adj_indptr", []float32{0, 1, 2, 4, 5, 7, 8}, []int64{7}})), want: "adj_indptr: want an integer array, have float32"},
		{name: "bad indptr", file: npzBytes(t, replace(tinyArchive(), member{"adj_indptr", []int32{0, 1, 2, 1, 5, 7, 8}, []int64{7}})), want: "indptr decreases at row 2"},
		{name: "feature rows", file: npzBytes(t, replace(tinyArchive(), member{"attr_shape", []int64{5, 4}, []int64{2}})), want: "attr: indptr has 7 entries, want rows+1 = 6"},
		{name: "huge features", file: npzBytes(t, replace(tinyArchive(), member{"attr_shape", []int64{6, 1 << 40}, []int64{2}})), want: "too large"},
		{name: "multi-label", file: npzBytes(t, replace(tinyArchive(), member{"labels", []float32{1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}, []int64{6, 3}})), want: "labels row 0 is not one-hot"},
		{name: "split too large", file: good, want: "needs 1 validation + 6 test"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npz")
			if !c.missing {
				if err := os.WriteFile(path, c.file, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			opt := smallSplit
			if c.name == "split too large" {
				opt.Test = 6
			}
			_, err := Import(path, opt)
			if err == nil {
				t.Fatalf("no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want the file name and %q", err, c.want)
			}
		})
	}
}

func TestArchiveKeys(t *testing.T) {
	b := npzBytes(t, tinyArchive())
	a, err := NewArchive(bytes.NewReader(b), int64(len(b)), "mem.npz")
	if err != nil {
		t.Fatal(err)
	}
	keys := a.Keys()
	if len(keys) != 9 || keys[0] != "adj_data" || !a.Has("labels") || a.Has("label") {
		t.Errorf("keys %v", keys)
	}
	if _, _, err := a.Read("nope"); err == nil || !strings.Contains(err.Error(), `mem.npz: no array "nope"`) {
		t.Errorf("missing key: %v", err)
	}
}

func FuzzImport(f *testing.F) {
	f.Add(npzBytes(f, tinyArchive()))
	f.Add(npzBytes(f, append(tinyGraph(), member{"attr_matrix", tinyDense, []int64{6, 4}}, tinyLabels())))
	f.Add(npzBytes(f, replace(tinyArchive(), member{"adj_shape", []int64{1 << 40, 1 << 40}, []int64{2}})))
	f.Add(npzBytes(f, dotted(tinyArchive())))
	f.Add(storedBytes(f, dotted(tinyArchive())))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := NewArchive(bytes.NewReader(b), int64(len(b)), "fuzz.npz")
		if err != nil {
			return
		}
		d, err := importArchive(a, dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1}, 1<<16)
		if err != nil {
			return
		}
		n := d.Graph.NumNodes
		if int64(len(d.Labels)) != n || int64(len(d.Features)) != n*int64(d.FeatDim) {
			t.Fatalf("%d vertices, %d labels, %d features of dim %d", n, len(d.Labels), len(d.Features), d.FeatDim)
		}
	})
}

// FuzzImportMember replaces one member of a valid archive by fuzzed .npy
// bytes, which reaches the validation of each array.
func FuzzImportMember(f *testing.F) {
	fuzzMembers(f, tinyArchive())
}

// fuzzMembers is the body of the member fuzzers: base is a valid archive;
// each input names a member to replace and its bytes.
func fuzzMembers(f *testing.F, base []member) {
	for i, m := range base {
		var buf bytes.Buffer
		if err := npy.Write(&buf, m.data, m.shape); err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		var zbuf bytes.Buffer
		zw := zip.NewWriter(&zbuf)
		for i, m := range base {
			w, err := zw.Create(m.key + ".npy")
			if err != nil {
				t.Fatal(err)
			}
			if i == int(which)%len(base) {
				w.Write(raw)
			} else if err := npy.Write(w, m.data, m.shape); err != nil {
				t.Fatal(err)
			}
		}
		zw.Close()
		a, err := NewArchive(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()), "fuzz.npz")
		if err != nil {
			t.Fatal(err)
		}
		d, err := importArchive(a, dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1}, 1<<16)
		if err != nil {
			return
		}
		if d.Graph.NumNodes != 6 || len(d.Features) != 6*d.FeatDim {
			t.Fatalf("%d vertices, %d features of dim %d", d.Graph.NumNodes, len(d.Features), d.FeatDim)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("imported an invalid dataset: %v", err)
		}
	})
}

// renamed returns ms with the prefix of every key starting with from+"_"
// replaced by to.
func renamed(ms []member, from, to string) []member {
	out := make([]member, len(ms))
	for i, m := range ms {
		if rest, ok := strings.CutPrefix(m.key, from+"_"); ok {
			m.key = to + "_" + rest
		}
		out[i] = m
	}
	return out
}

func TestImportOtherLayouts(t *testing.T) {
	// feature_* features and labels indexed by label_indices (vertex 4
	// unlabelled).
	ms := append(append(tinyGraph(), renamed(tinySparseAttr(), "attr", "feature")...),
		member{"labels", []int32{2, 0, 1, 0, 1}, []int64{5}},
		member{"label_indices", []int64{5, 0, 2, 3, 1}, []int64{5}})
	path := writeNPZ(t, t.TempDir(), "indexed.npz", ms)
	_, err := Import(path, dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 0})
	if err == nil || !strings.Contains(err.Error(), "needs 1 validation + 1000 test") {
		t.Errorf("default test size on 4 labelled vertices: %v", err)
	}
	d, err := Import(path, dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Features, tinyDense) || !slices.Equal(d.Labels, []int32{0, 1, 1, 0, -1, 2}) || d.NumClasses != 3 {
		t.Errorf("features %v labels %v (%d classes)", d.Features, d.Labels, d.NumClasses)
	}
	// shchur's sparse label keys: labels_data, labels_indices, ...
	ms = append(append(tinyGraph(), tinySparseAttr()...),
		member{"labels_indptr", []int32{0, 1, 2, 3, 4, 5, 6}, []int64{7}},
		member{"labels_indices", []int32{2, 2, 1, 0, 1, 0}, []int64{6}},
		member{"labels_data", []float32{1, 1, 1, 1, 1, 1}, []int64{6}},
		member{"labels_shape", []int64{6, 3}, []int64{2}})
	d, err = Import(writeNPZ(t, t.TempDir(), "s.npz", ms), smallSplit)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Labels, []int32{2, 2, 1, 0, 1, 0}) {
		t.Errorf("labels %v", d.Labels)
	}
	// Bad indices name the file and the array.
	ms = append(append(tinyGraph(), tinySparseAttr()...),
		member{"labels", []int32{2, 0}, []int64{2}},
		member{"label_indices", []int64{5, 6}, []int64{2}})
	path = writeNPZ(t, t.TempDir(), "bad.npz", ms)
	if _, err := Import(path, smallSplit); err == nil || !strings.Contains(err.Error(), path+": label_indices[1] = 6 is out of range [0, 6)") {
		t.Errorf("label index out of range: %v", err)
	}
}

// TestImportDottedLayout: the adj_matrix.* / attr_matrix.* / labels layout of
// the citation and co-purchase archives imports like the other one.
func TestImportDottedLayout(t *testing.T) {
	want, err := Import(writeNPZ(t, t.TempDir(), "tiny.npz", tinyArchive()), smallSplit)
	if err != nil {
		t.Fatal(err)
	}
	// Extra members (names, metadata) are not read.
	ms := append(dotted(tinyArchive()), member{"idx_to_node", []int64{0, 1, 2, 3, 4, 5}, []int64{6}})
	got, err := Import(writeNPZ(t, t.TempDir(), "tiny.npz", ms), smallSplit)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Graph.Indptr, want.Graph.Indptr) || !slices.Equal(got.Graph.Indices, want.Graph.Indices) ||
		!slices.Equal(got.Features, want.Features) || !slices.Equal(got.Labels, want.Labels) ||
		!slices.Equal(got.Train, want.Train) || !slices.Equal(got.Test, want.Test) {
		t.Errorf("dotted layout differs from the underscore one")
	}
	if !slices.Equal(got.Preprocessing, []string{"symmetrize", "drop-self-loops", "dedup-edges"}) {
		t.Errorf("preprocessing %q", got.Preprocessing)
	}
	// Dense attr_matrix and sparse labels.* in the same layout.
	ms = append(dotted(tinyGraph()), member{"attr_matrix", tinyDense, []int64{6, 4}},
		member{"labels.indptr", []int32{0, 1, 2, 3, 4, 5, 6}, []int64{7}},
		member{"labels.indices", []int32{0, 1, 2, 0, 1, 2}, []int64{6}},
		member{"labels.shape", []int64{6, 3}, []int64{2}})
	got, err = Import(writeNPZ(t, t.TempDir(), "dense.npz", ms), smallSplit)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Features, tinyDense) || !slices.Equal(got.Labels, want.Labels) {
		t.Errorf("dense features %v labels %v", got.Features, got.Labels)
	}
	// Neither layout: the error lists both and what the archive holds.
	path := writeNPZ(t, t.TempDir(), "none.npz", append(tinySparseAttr(), tinyLabels()))
	_, err = Import(path, smallSplit)
	if err == nil || !strings.Contains(err.Error(), "no adjacency matrix: want adj_data/adj_indices/adj_indptr/adj_shape or adj_matrix.data/adj_matrix.indices/adj_matrix.indptr/adj_matrix.shape; the archive holds attr_data") {
		t.Errorf("no adjacency: %v", err)
	}
}

// TestImportChecksMemberCRC: a flipped byte in a stored (uncompressed)
// member's data is caught by its CRC, though the bytes still parse.
func TestImportChecksMemberCRC(t *testing.T) {
	good := storedBytes(t, tinyArchive())
	path := filepath.Join(t.TempDir(), "x.npz")
	os.WriteFile(path, good, 0o644)
	if _, err := Import(path, smallSplit); err != nil {
		t.Fatal(err)
	}
	// The 0.5 of attr_data (float64 0x3fe0...) becomes another number.
	var half [8]byte
	binary.LittleEndian.PutUint64(half[:], math.Float64bits(0.5))
	at := bytes.Index(good, half[:])
	if at < 0 {
		t.Fatal("no 0.5 in the archive")
	}
	bad := bytes.Clone(good)
	bad[at+6] ^= 0x01
	os.WriteFile(path, bad, 0o644)
	_, err := Import(path, smallSplit)
	if err == nil || !strings.Contains(err.Error(), path+`: member "attr_data.npy" is damaged (its CRC-32 does not match)`) {
		t.Errorf("flipped byte: %v", err)
	}
	// Bytes after an array's data are an error, not ignored.
	ms := replace(tinyArchive(), member{"adj_shape", []int64{6, 6, 7}, []int64{3}})
	raw := storedBytes(t, ms)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	zr, _ := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	for _, f := range zr.File {
		w, _ := zw.Create(f.Name)
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		if f.Name == "adj_shape.npy" {
			b = bytes.Replace(b, []byte("(3,)"), []byte("(2,)"), 1)
		}
		w.Write(b)
	}
	zw.Close()
	os.WriteFile(path, zbuf.Bytes(), 0o644)
	if _, err := Import(path, smallSplit); err == nil || !strings.Contains(err.Error(), "adj_shape: 8 bytes after the array's data") {
		t.Errorf("trailing bytes: %v", err)
	}
}

// TestImportRejectsNonFiniteFeatures names the array, row and column.
func TestImportRejectsNonFiniteFeatures(t *testing.T) {
	dense := slices.Clone(tinyDense)
	dense[3*4+1] = float32(math.NaN())
	path := writeNPZ(t, t.TempDir(), "nan.npz", append(tinyGraph(), member{"attr_matrix", dense, []int64{6, 4}}, tinyLabels()))
	if _, err := Import(path, smallSplit); err == nil || !strings.Contains(err.Error(), path+": attr_matrix: row 3 (vertex 3), column 1 is NaN") {
		t.Errorf("NaN: %v", err)
	}
	sparse := replace(tinyArchive(), member{"attr_data", []float64{1, 0.5, 2, 3, 0.5, math.Inf(1), 5, 0.5, 6}, []int64{9}})
	path = writeNPZ(t, t.TempDir(), "inf.npz", sparse)
	if _, err := Import(path, smallSplit); err == nil || !strings.Contains(err.Error(), path+": attr_*: row 3 (vertex 3), column 3 is +Inf") {
		t.Errorf("Inf: %v", err)
	}
}

// FuzzImportDotted replaces one member of a valid archive in the
// adj_matrix.* layout by fuzzed .npy bytes.
func FuzzImportDotted(f *testing.F) {
	fuzzMembers(f, dotted(tinyArchive()))
}

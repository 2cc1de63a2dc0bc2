package main

import (
	"archive/zip"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/npy"
)

// ringNPZ writes an uncompressed .npz in the adj_matrix.* layout: a ring of
// 60 vertices, 4 dense features (feature (7, 1) set to bad), 3 classes.
func ringNPZ(t *testing.T, path string, bad float32) []byte {
	t.Helper()
	const n = 60
	indptr, indices, data := []int64{0}, []int32{}, []float32{}
	feat := make([]float32, n*4)
	labels := make([]int64, n)
	for v := range int64(n) {
		indices = append(indices, int32((v+1)%n))
		data = append(data, 1)
		indptr = append(indptr, int64(len(indices)))
		feat[v*4+v%4] = 1
		labels[v] = v % 3
	}
	feat[7*4+1] = bad
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range []struct {
		key   string
		data  any
		shape []int64
	}{
		{"adj_matrix.data", data, []int64{n}}, {"adj_matrix.indices", indices, []int64{n}},
		{"adj_matrix.indptr", indptr, []int64{n + 1}}, {"adj_matrix.shape", []int64{n, n}, []int64{2}},
		{"attr_matrix", feat, []int64{n, 4}}, {"labels", labels, []int64{n}},
	} {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: m.key + ".npy", Method: zip.Store})
		if err := npy.Write(w, m.data, m.shape); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImportNPZ(t *testing.T) {
	dir := t.TempDir()
	src, out := filepath.Join(dir, "ring.npz"), filepath.Join(dir, "ring")
	good := ringNPZ(t, src, 0.5)
	split := []string{"--train-per-class", "5", "--valid", "10", "--test", "20"}
	code, stdout, stderr := fanout(t, append([]string{"import", "npz", src, "--out", out, "--normalize-features"}, split...)...)
	if code != 0 || !strings.Contains(stdout, "60 vertices, 120 edges, 15/10/20 train/valid/test") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = fanout(t, "info", out)
	if code != 0 || !strings.Contains(stdout, "preprocess symmetrize, drop-self-loops, dedup-edges, normalize-features\n") ||
		!strings.Contains(stdout, "5 per class, 10 valid, 20 test; seed 1") {
		t.Errorf("info:\n%s", stdout)
	}
	// A NaN written into the dataset later is found when it is opened.
	feat, shape, err := npy.ReadFile(filepath.Join(out, "feat.npy"))
	if err != nil {
		t.Fatal(err)
	}
	feat.([]float32)[9*4+2] = float32(math.NaN())
	if err := npy.WriteFile(filepath.Join(out, "feat.npy"), feat, shape); err != nil {
		t.Fatal(err)
	}
	oneLineError(t, "feat.npy: row 9 (vertex 9), column 2 is NaN", "train", "--data", out, "--device", "cpu", "--batch", "8")
	oneLineError(t, "choose smaller split sizes (--train-per-class, --valid, --test)", "import", "npz", src, "--out", filepath.Join(dir, "x"), "--test", "1000")
	oneLineError(t, "--valid 0: want at least 1", "import", "npz", src, "--out", filepath.Join(dir, "x"), "--valid", "0")
	oneLineError(t, "--test: only npz archives are split here", "import", "planetoid", dir, "--name", "cora", "--out", filepath.Join(dir, "x"), "--test", "10")
	// A flipped byte in the stored feature array.
	at := bytes.Index(good, []byte{0, 0, 0, 0x3f}) // 0.5 as float32
	bad := bytes.Clone(good)
	bad[at+2] ^= 0x40
	os.WriteFile(src, bad, 0o644)
	oneLineError(t, `member "attr_matrix.npy" is damaged (its CRC-32 does not match)`, "import", "npz", src, "--out", filepath.Join(dir, "x"))
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		ringNPZ(t, src, v)
		oneLineError(t, "attr_matrix: row 7 (vertex 7), column 1 is", append([]string{"import", "npz", src, "--out", filepath.Join(dir, "x")}, split...)...)
	}
}

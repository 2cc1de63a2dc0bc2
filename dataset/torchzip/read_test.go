package torchzip

import (
	"archive/zip"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fmt"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// writeZip writes an archive of the given entries (stored, in name order).
func writeZip(t *testing.T, entries map[string][]byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "split.pt")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(entries[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return file
}

// int32s encodes little-endian int32 values.
func int32s(v ...int32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

// transposedPickle is {'edge': a tensor of size (3, 2) and stride (1, 3)
// over IntStorage "0" of numel elements}, written with the memo, short
// strings and one-byte ints as PyTorch writes them; global replaces the
// rebuild function's reference when set.
func transposedPickle(numel byte, global string) []byte {
	if global == "" {
		global = "torch._utils\n_rebuild_tensor_v2\n"
	}
	p := []byte{0x80, 2, '}', 'q', 0, '(', 0x8c, 4}
	p = append(p, "edge"...)
	p = append(p, 'q', 1, 'c')
	p = append(p, global...)
	p = append(p, 'q', 2, '(', '(', 0x8c, 7)
	p = append(p, "storage"...)
	p = append(p, 'c')
	p = append(p, "torch\nIntStorage\n"...)
	p = append(p, 0x8c, 1, '0', 0x8c, 3)
	p = append(p, "cpu"...)
	p = append(p, 'K', numel, 't', 'Q', 'K', 0, 'K', 3, 'K', 2, 0x86, 'K', 1, 'K', 3, 0x86, 0x89, 'c')
	p = append(p, "collections\nOrderedDict\n"...)
	p = append(p, ')', 'R', 't', 'R', 'q', 3, 'u', '.')
	return p
}

// TestReadStridedTensor: a hand-made archive whose tensor is a transposed
// view of its storage reads in C order.
func TestReadStridedTensor(t *testing.T) {
	file := writeZip(t, map[string][]byte{
		"train/byteorder": []byte("little"),
		"train/data.pkl":  transposedPickle(6, ""),
		"train/data/0":    int32s(10, 20, 30, -1, -2, -3),
	})
	got, err := Read(file, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := got["edge"]
	if e == nil || e.DType != "int32" || !slices.Equal(e.Shape, []int64{3, 2}) || e.IsFloat() {
		t.Fatalf("edge: %+v", e)
	}
	if want := []int64{10, -1, 20, -2, 30, -3}; !slices.Equal(e.Ints, want) {
		t.Fatalf("edge values %v, want %v", e.Ints, want)
	}
}

// TestReadTorchLayout: the pickle as PyTorch 2 writes {'edge': a
// LongTensor of size (200, 2)} (BINUNICODE strings, BININT2 sizes, a
// memo entry for every object) reads.
func TestReadTorchLayout(t *testing.T) {
	pkl := []byte("\x80\x02}q\x00X\x04\x00\x00\x00edgeq\x01ctorch._utils\n_rebuild_tensor_v2\nq\x02((X\x07\x00\x00\x00storageq\x03ctorch\nLongStorage\nq\x04" +
		"X\x01\x00\x00\x000q\x05X\x03\x00\x00\x00cpuq\x06M\x90\x01tq\x07QK\x00K\xc8K\x02\x86q\x08K\x02K\x01\x86q\x09\x89ccollections\nOrderedDict\nq\n)Rq\x0btq\x0cRq\x0ds.")
	var raw []byte
	for i := range 400 {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(i*3))
	}
	file := writeZip(t, map[string][]byte{"train/data.pkl": pkl, "train/data/0": raw, "train/version": []byte("3\n")})
	got, err := Read(file, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := got["edge"]
	if e == nil || e.DType != "int64" || !slices.Equal(e.Shape, []int64{200, 2}) || e.Ints[1] != 3 || e.Ints[399] != 1197 {
		t.Fatalf("edge: %v", e)
	}
}

// TestWriteRead: Write's archives read back the same tensors.
func TestWriteRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "valid.pt")
	in := map[string]*Tensor{
		"edge":     {Shape: []int64{2, 2}, Ints: []int64{1, 2, 3, 1 << 40}},
		"edge_neg": {Shape: []int64{1, 2}, Ints: []int64{-5, 7}},
		"weight":   {Shape: []int64{3}, Floats: []float64{0.5, -2, 3.25}},
	}
	if err := Write(file, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(file, 0)
	if err != nil {
		t.Fatal(err)
	}
	if keys := Keys(out); !slices.Equal(keys, []string{"edge", "edge_neg", "weight"}) {
		t.Fatalf("keys %v", keys)
	}
	for k, want := range in {
		got := out[k]
		if !slices.Equal(got.Shape, want.Shape) || !slices.Equal(got.Ints, want.Ints) || !slices.Equal(got.Floats, want.Floats) {
			t.Errorf("%s: %+v, want %+v", k, got, want)
		}
	}
	if empty := (&Tensor{DType: "float64"}); !empty.IsFloat() || out["edge"].IsFloat() || !out["weight"].IsFloat() {
		t.Error("IsFloat is wrong")
	}
	if out["weight"].DType != "float32" || out["edge"].DType != "int64" {
		t.Errorf("dtypes %s, %s", out["weight"].DType, out["edge"].DType)
	}
}

// TestReadMalformed: broken archives fail with errors naming the file
// and what is wrong.
func TestReadMalformed(t *testing.T) {
	good := transposedPickle(6, "")
	cases := []struct {
		name    string
		entries map[string][]byte
		budget  int64
		want    string
	}{
		{"truncated pickle", map[string][]byte{"a/data.pkl": good[:40], "a/data/0": int32s(1, 2, 3, 4, 5, 6)}, 0, "truncated"},
		{"no stop", map[string][]byte{"a/data.pkl": good[:len(good)-1], "a/data/0": int32s(1, 2, 3, 4, 5, 6)}, 0, "without STOP"},
		{"storage size", map[string][]byte{"a/data.pkl": good, "a/data/0": int32s(1, 2, 3, 4)}, 0, "holds 16 bytes, want 24"},
		{"missing storage", map[string][]byte{"a/data.pkl": good}, 0, `no "a/data/0" in the archive`},
		{"tensor beyond storage", map[string][]byte{"a/data.pkl": transposedPickle(5, ""), "a/data/0": int32s(1, 2, 3, 4, 5)}, 0, "reaches element 5"},
		{"unknown global", map[string][]byte{"a/data.pkl": transposedPickle(6, "os\nsystem\n"), "a/data/0": int32s(1, 2, 3, 4, 5, 6)}, 0, `class "os.system" is not allowed`},
		{"over budget", map[string][]byte{"a/data.pkl": good, "a/data/0": int32s(1, 2, 3, 4, 5, 6)}, 20, "over the 20 bytes allowed"},
		{"no pickle", map[string][]byte{"a/data/0": int32s(1)}, 0, "no <name>/data.pkl"},
		{"not a dict", map[string][]byte{"a/data.pkl": {0x80, 2, 'K', 1, '.'}}, 0, "holds a int, want a dict"},
		{"big-endian", map[string][]byte{"a/data.pkl": good, "a/byteorder": []byte("big"), "a/data/0": int32s(1, 2, 3, 4, 5, 6)}, 0, "only little-endian"},
		{"unsupported opcode", map[string][]byte{"a/data.pkl": {0x80, 2, 'b', '.'}}, 0, "not supported in a tensor file"},
		{"int key", map[string][]byte{"a/data.pkl": {0x80, 2, '}', 'K', 1, 'K', 2, 's', '.'}}, 0, "dict key is a int, want a string"},
	}
	for _, c := range cases {
		file := writeZip(t, c.entries)
		_, err := Read(file, c.budget)
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", c.name, err, file, c.want)
		}
	}
}

// TestReadNotZip: a legacy (non-zip) torch file is refused clearly.
func TestReadNotZip(t *testing.T) {
	file := filepath.Join(t.TempDir(), "old.pt")
	if err := os.WriteFile(file, []byte{0x80, 2, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46}, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(file, 0)
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a zip archive") {
		t.Fatalf("error %v", err)
	}
}

// TestReadQuotesLongNames: an archive's entry names and a pickle's keys
// (up to 64 KiB each) are quoted to at most quote.Limit bytes.
func TestReadQuotesLongNames(t *testing.T) {
	long := strings.Repeat("k", 1<<16-20)
	key := []byte{0x80, 2, '}', 'X'}
	key = binary.LittleEndian.AppendUint32(key, uint32(len(long)))
	key = append(append(key, long...), 'K', 1, 's', '.')
	for name, entries := range map[string]map[string][]byte{
		"entry name": {long + "/data.pkl": {0x80, 2, 'K', 1, '.'}},
		"dict key":   {"a/data.pkl": key},
	} {
		file := writeZip(t, entries)
		_, err := Read(file, 0)
		if err == nil || len(err.Error()) > len(file)+3*quote.Limit || !strings.Contains(err.Error(), "bytes)") {
			t.Errorf("%s: an error of %d bytes, want the name quoted to %d: %.300v", name, len(fmt.Sprint(err)), quote.Limit, err)
		}
	}
}

package dataset

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dtype"
)

// TestFeaturesOnDisk: OpenWith's FeaturesOnDisk leaves the features out of
// memory, and FeatureFile reads every row as Open maps it, float32 and
// bfloat16, in one read or in runs.
func TestFeaturesOnDisk(t *testing.T) {
	for _, bf16 := range []bool{false, true} {
		d := ring(10)
		if bf16 {
			d.RoundFeatures()
		}
		dir := filepath.Join(t.TempDir(), "ds")
		if err := Write(dir, d); err != nil {
			t.Fatal(err)
		}
		lazy, err := OpenWith(dir, OpenOptions{FeaturesOnDisk: true})
		if err != nil {
			t.Fatal(err)
		}
		f := lazy.FeatureFile
		if lazy.Features != nil || lazy.FeaturesBF16 != nil || f == nil {
			t.Fatalf("bf16 %t: features in memory (%d, %d values) or no file", bf16, len(lazy.Features), len(lazy.FeaturesBF16))
		}
		if lazy.FeatureDType() != d.FeatureDType() || lazy.FeatureBytes() != d.FeatureBytes() {
			t.Errorf("bf16 %t: dtype %v and %d bytes, want %v and %d", bf16, lazy.FeatureDType(), lazy.FeatureBytes(), d.FeatureDType(), d.FeatureBytes())
		}
		for _, run := range []int64{1, 3, 10} {
			for first := int64(0); first+run <= 10; first += run {
				p := make([]byte, run*f.RowBytes())
				if err := f.ReadRows(p, first); err != nil {
					t.Fatal(err)
				}
				for k := range run * int64(f.Dim) {
					i := first*int64(f.Dim) + k
					var got, want float64
					if bf16 {
						got, want = float64(dtype.BF16Float(binary.LittleEndian.Uint16(p[2*k:]))), float64(dtype.BF16Float(d.FeaturesBF16[i]))
					} else {
						got, want = float64(math.Float32frombits(binary.LittleEndian.Uint32(p[4*k:]))), float64(d.Features[i])
					}
					if got != want {
						t.Fatalf("bf16 %t: value %d read %v, want %v", bf16, i, got, want)
					}
				}
			}
		}
		if err := f.ReadRows(make([]byte, 2*f.RowBytes()), 9); err == nil || !strings.Contains(err.Error(), "outside the table of 10 rows") {
			t.Errorf("rows past the table: %v", err)
		}
		lazy.Close()
	}
}

// TestFeaturesOnDiskErrors: a missing, truncated or misshapen feat.npy,
// and a truncation after the open, are errors naming the file and what
// the manifest says.
func TestFeaturesOnDiskErrors(t *testing.T) {
	setup := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "ds")
		if err := Write(dir, ring(10)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cut := func(t *testing.T, dir string, drop int64) {
		path := filepath.Join(dir, FeatFile)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, st.Size()-drop); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   string
	}{
		{"missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, FeatFile)) }, "feat.npy: no such file"},
		{"truncated", func(t *testing.T, dir string) { cut(t, dir, 5) },
			"feat.npy: truncated: 243 bytes, but manifest.yaml says num_nodes = 10, feat_dim = 3, which need 248"},
		{"shape", func(t *testing.T, dir string) { putArray(t, dir, FeatFile, make([]float32, 30), 30) },
			"feat.npy: shape [30] (fortran_order false), but manifest.yaml says num_nodes = 10, feat_dim = 3"},
		{"dtype", func(t *testing.T, dir string) { putArray(t, dir, FeatFile, make([]uint16, 30), 10, 3) },
			"feat.npy: dtype <u2, but manifest.yaml has no feature_dtype: bfloat16"},
	} {
		dir := setup(t)
		c.mutate(t, dir)
		_, err := OpenWith(dir, OpenOptions{FeaturesOnDisk: true})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	dir := setup(t)
	d, err := OpenWith(dir, OpenOptions{FeaturesOnDisk: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cut(t, dir, 13)
	err = d.FeatureFile.ReadRows(make([]byte, 2*d.FeatureFile.RowBytes()), 8)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "feat.npy: truncated: rows [8, 10) lie past the end")) {
		t.Errorf("truncated after the open: %v", err)
	}
}

package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypedFeaturesOnDisk: OpenWith's FeaturesOnDisk leaves every typed
// table out of memory, a FeatureFile per type with features (none for the
// featureless author), each reading its type's rows as Open maps them,
// float32 and bfloat16; the dtype, the bytes per type and in all are the
// in-memory dataset's.
func TestTypedFeaturesOnDisk(t *testing.T) {
	for _, bf16 := range []bool{false, true} {
		d := smallTyped(t, true)
		if bf16 {
			d.RoundFeatures()
		}
		dir := filepath.Join(t.TempDir(), "small")
		if err := Write(dir, d); err != nil {
			t.Fatal(err)
		}
		lazy, err := OpenWith(dir, OpenOptions{FeaturesOnDisk: true})
		if err != nil {
			t.Fatal(err)
		}
		defer lazy.Close()
		if lazy.FeatureDType() != d.FeatureDType() || lazy.FeatureBytes() != d.FeatureBytes() || lazy.FeatureFile != nil {
			t.Errorf("bf16 %t: dtype %v and %d bytes, want %v and %d", bf16, lazy.FeatureDType(), lazy.FeatureBytes(), d.FeatureDType(), d.FeatureBytes())
		}
		for i, vt := range lazy.Types {
			f := vt.FeatureFile
			if vt.Features != nil || vt.FeaturesBF16 != nil || (f == nil) != (vt.FeatDim == 0) {
				t.Fatalf("bf16 %t: %s: features in memory, or a file %v for feat_dim %d", bf16, vt.Name, f, vt.FeatDim)
			}
			if f == nil {
				continue
			}
			if want := filepath.Join(dir, TypeDir(vt.Name), FeatFile); f.Path != want || f.Rows != vt.Count || f.Dim != vt.FeatDim {
				t.Errorf("%s: file %s of [%d, %d], want %s of [%d, %d]", vt.Name, f.Path, f.Rows, f.Dim, want, vt.Count, vt.FeatDim)
			}
			got := make([]byte, f.Rows*f.RowBytes())
			if err := f.ReadRows(got, 0); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := binary.Write(&want, binary.LittleEndian, d.Types[i].FeatureTable()); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("bf16 %t: %s's rows read % x, want % x", bf16, vt.Name, got, want.Bytes())
			}
		}
		info := lazy.Info()
		for i, ti := range info.Types {
			if want := d.Types[i].featureBytes(); ti.FeatureBytes != want {
				t.Errorf("bf16 %t: info says %s has %d bytes of features, want %d", bf16, ti.Name, ti.FeatureBytes, want)
			}
		}
	}
}

// TestTypedFeaturesOnDiskErrors: a type's missing, truncated or misshapen
// feat.npy, or one of another dtype than the manifest's, is an error
// naming the type's file and what the manifest says of the type.
func TestTypedFeaturesOnDiskErrors(t *testing.T) {
	paper := filepath.Join(TypeDir("paper"), FeatFile)
	for _, c := range []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   string // after "DIR/"
	}{
		{"missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, paper)) }, paper + ": no such file"},
		{"truncated", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, paper), 128+40-5); err != nil {
				t.Fatal(err)
			}
		}, paper + ": truncated: 163 bytes, but manifest.yaml says type paper has count = 5, feat_dim = 2, which need 168"},
		{"shape", func(t *testing.T, dir string) { putArray(t, dir, paper, make([]float32, 10), 2, 5) },
			paper + ": shape [2 5] (fortran_order false), but manifest.yaml says type paper has count = 5, feat_dim = 2"},
		{"dtype", func(t *testing.T, dir string) {
			putArray(t, dir, filepath.Join(TypeDir("field"), FeatFile), make([]uint16, 2), 2, 1)
		}, filepath.Join(TypeDir("field"), FeatFile) + ": dtype <u2, but manifest.yaml has no feature_dtype: bfloat16"},
	} {
		dir := filepath.Join(t.TempDir(), "small")
		if err := Write(dir, smallTyped(t, false)); err != nil {
			t.Fatal(err)
		}
		c.mutate(t, dir)
		_, err := OpenWith(dir, OpenOptions{FeaturesOnDisk: true})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

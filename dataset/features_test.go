package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dtype"
)

// ringBF16 is ring(n) with its features rounded to bfloat16.
func ringBF16(n int64) *Dataset {
	d := ring(n)
	d.RoundFeatures()
	return d
}

// TestManifestFeatureDType: feature_dtype parses and survives marshal and
// parse; absent means float32 and is not written for float32; another
// name is an error naming the key.
func TestManifestFeatureDType(t *testing.T) {
	for _, c := range []struct{ text, want string }{{goodManifest, ""}, {goodManifest + "feature_dtype: bfloat16\n", "bfloat16"}, {goodManifest + "feature_dtype: float32\n", "float32"}} {
		m, err := ParseManifest([]byte(c.text))
		if err != nil || m.FeatureDType != c.want {
			t.Fatalf("feature_dtype %q, %v; want %q", m.FeatureDType, err, c.want)
		}
		text, err := m.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), "feature_dtype") != (c.want != "") {
			t.Errorf("feature_dtype %q marshals as\n%s", c.want, text)
		}
		again, err := ParseManifest(text)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Errorf("round trip of %+v: %+v, %v", m, again, err)
		}
	}
	_, err := ParseManifest([]byte(goodManifest + "feature_dtype: float16\n"))
	if err == nil || !strings.Contains(err.Error(), `feature_dtype is "float16", want float32 or bfloat16`) {
		t.Errorf("float16: %v", err)
	}
	if m := manifestOf(ring(10)); m.FeatureDType != "" {
		t.Errorf("a float32 dataset's manifest records feature_dtype %q", m.FeatureDType)
	}
	if m := manifestOf(ringBF16(10)); m.FeatureDType != "bfloat16" {
		t.Errorf("a bfloat16 dataset's manifest records feature_dtype %q", m.FeatureDType)
	}
}

// TestWriteOpenBF16: a bfloat16 dataset is written as <u2 bit patterns
// with feature_dtype: bfloat16, opened mapped as FeaturesBF16 (no float32
// table), half the feature bytes of the float32 one, and described so.
func TestWriteOpenBF16(t *testing.T) {
	want := ringBF16(10)
	if !slices.Equal(want.FeaturesBF16, dtype.ToBF16(ring(10).Features)) || want.Features != nil {
		t.Fatalf("RoundFeatures: %v (float32 kept: %v)", want.FeaturesBF16, want.Features != nil)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	sameContent(t, got, want)
	if got.FeatureDType() != dtype.BF16 || got.Features != nil || !slices.Equal(got.FeaturesBF16, want.FeaturesBF16) {
		t.Errorf("opened: dtype %v, float32 set: %v, bits %v", got.FeatureDType(), got.Features != nil, got.FeaturesBF16)
	}
	if b := got.FeatureBytes(); b != 60 || ring(10).FeatureBytes() != 120 {
		t.Errorf("feature bytes %d and %d, want 60 and 120", b, ring(10).FeatureBytes())
	}
	if s := got.Info().String(); !strings.Contains(s, "features   3 bfloat16 per vertex (60 B)\n") {
		t.Errorf("info:\n%s", s)
	}
	text, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	if !strings.Contains(string(text), "feature_dtype: bfloat16\n") {
		t.Errorf("manifest:\n%s", text)
	}
	got.WidenFeatures()
	if got.FeatureDType() != dtype.F32 || got.FeaturesBF16 != nil {
		t.Fatal("WidenFeatures left bfloat16 features")
	}
	for i, v := range got.Features {
		if v != dtype.BF16Float(want.FeaturesBF16[i]) {
			t.Fatalf("widened value %d: %v, want %v", i, v, dtype.BF16Float(want.FeaturesBF16[i]))
		}
	}
}

// TestOpenBadBF16: feat.npy and the manifest's feature_dtype must agree,
// and bfloat16 features must be finite and of the manifest's shape; each
// error names the file and what is wrong.
func TestOpenBadBF16(t *testing.T) {
	bits := func() []uint16 { return slices.Clone(ringBF16(10).FeaturesBF16) }
	cases := []struct {
		name   string
		bf16   bool // the dataset written first is bfloat16
		mutate func(t *testing.T, dir string)
		want   string // after "DIR/"
	}{
		{"u2 without the key", false, func(t *testing.T, dir string) { putArray(t, dir, FeatFile, bits(), 10, 3) },
			"feat.npy: dtype <u2, but manifest.yaml has no feature_dtype: bfloat16"},
		{"key over float32", true, func(t *testing.T, dir string) { putArray(t, dir, FeatFile, ring(10).Features, 10, 3) },
			"feat.npy: dtype <f4, but manifest.yaml says feature_dtype: bfloat16, which feat.npy stores as <u2"},
		{"key over float64", true, func(t *testing.T, dir string) { putArray(t, dir, FeatFile, make([]float64, 30), 10, 3) },
			"feat.npy: dtype <f8, want <u2 (bfloat16 bit patterns), as manifest.yaml says feature_dtype: bfloat16"},
		{"shape", true, func(t *testing.T, dir string) { putArray(t, dir, FeatFile, bits(), 30) },
			"feat.npy: shape [30], but manifest.yaml says num_nodes = 10, feat_dim = 3"},
		{"feat_dim", true, func(t *testing.T, dir string) { editManifest(t, dir, "feat_dim: 3", "feat_dim: 5") },
			"feat.npy: shape [10 3], but manifest.yaml says num_nodes = 10, feat_dim = 5"},
		{"NaN", true, func(t *testing.T, dir string) {
			b := bits()
			b[7*3+2] = 0x7fc0
			putArray(t, dir, FeatFile, b, 10, 3)
		}, "feat.npy: row 7 (vertex 7), column 2 is NaN (bfloat16 bits 0x7fc0); features must be finite numbers"},
		{"infinite", true, func(t *testing.T, dir string) {
			b := bits()
			b[4*3] = 0xff80
			putArray(t, dir, FeatFile, b, 10, 3)
		}, "feat.npy: row 4 (vertex 4), column 0 is -Inf (bfloat16 bits 0xff80)"},
		{"unknown dtype", true, func(t *testing.T, dir string) {
			editManifest(t, dir, "feature_dtype: bfloat16", "feature_dtype: bf16")
		}, `manifest.yaml: feature_dtype is "bf16", want float32 or bfloat16`},
	}
	for _, c := range cases {
		d := ring(10)
		if c.bf16 {
			d.RoundFeatures()
		}
		dir := filepath.Join(t.TempDir(), "ds")
		if err := Write(dir, d); err != nil {
			t.Fatal(err)
		}
		c.mutate(t, dir)
		got, err := Open(dir)
		want := filepath.Join(dir, c.want)
		if err == nil {
			got.Close()
			t.Errorf("%s: no error, want %q", c.name, want)
			continue
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error\n  %v\nwant one line containing\n  %q", c.name, err, want)
		}
	}
}

// TestValidateBF16: the bfloat16 table is checked as the float32 one, and
// a dataset may not hold both.
func TestValidateBF16(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(d *Dataset)
		want   string
	}{
		{"length", func(d *Dataset) { d.FeaturesBF16 = d.FeaturesBF16[:29] }, "feat.npy: 29 values, want num_nodes*feat_dim = 10*3 = 30"},
		{"both", func(d *Dataset) { d.Features = ring(10).Features }, "feat.npy: both float32 and bfloat16 features are set"},
		{"positive infinity", func(d *Dataset) { d.FeaturesBF16[5] = 0x7f80 }, "feat.npy: row 1 (vertex 1), column 2 is +Inf"},
	} {
		d := ringBF16(10)
		if err := d.Validate(); err != nil {
			t.Fatalf("valid dataset: %v", err)
		}
		c.mutate(d)
		if err := d.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want prefix %q", c.name, err, c.want)
		}
	}
}

// TestNormalizeBF16: normalising bfloat16 features works on their float32
// values and leaves float32 features (rounded again by RoundFeatures).
func TestNormalizeBF16(t *testing.T) {
	d, want := ringBF16(10), ringBF16(10)
	want.WidenFeatures()
	want.NormalizeFeatures()
	d.NormalizeFeatures()
	if d.FeatureDType() != dtype.F32 || !slices.Equal(d.Features, want.Features) {
		t.Fatalf("normalised bfloat16 features: dtype %v, %v; want float32 %v", d.FeatureDType(), d.Features, want.Features)
	}
	if d.Features[1*3] != float32(1)/2.5 {
		t.Errorf("row 1 starts %v, want 1/(1+1+0.5)", d.Features[3])
	}
}

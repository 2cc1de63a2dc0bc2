package dataset

import (
	"reflect"
	"strings"
	"testing"
)

const goodManifest = `# comment
format_version: 1
name: tiny
source: rmat tiny seed 1
num_nodes: 16384
num_edges: 398000
symmetric: true
feat_dim: 32
num_classes: 8
num_train: 3276
num_valid: 1638
num_test: 11470
`

func TestParseManifest(t *testing.T) {
	m, err := ParseManifest([]byte(goodManifest))
	if err != nil {
		t.Fatal(err)
	}
	want := Manifest{FormatVersion: 1, Name: "tiny", Source: "rmat tiny seed 1", NumNodes: 16384, NumEdges: 398000,
		Symmetric: true, FeatDim: 32, NumClasses: 8, NumTrain: 3276, NumValid: 1638, NumTest: 11470}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v, want %+v", m, want)
	}
	for _, c := range []struct{ text, want string }{
		{"", "empty manifest"},
		{goodManifest + "extra: 1\n", `line 13: unknown key "extra"`},
		{goodManifest + "---\nname: x\n", "more than one YAML document"},
		{strings.Replace(goodManifest, "num_nodes: 16384", "num_nodes: -1", 1), "num_nodes is negative (-1)"},
		{strings.Replace(goodManifest, "num_nodes: 16384", "num_nodes: many", 1), "cannot unmarshal !!str `many` into int64"},
		{strings.Replace(goodManifest, "num_train: 3276", "num_train: 20000", 1), "num_train (20000) exceeds num_nodes (16384)"},
		{strings.Replace(goodManifest, "feat_dim: 32\n", "", 1), "feat_dim is 0 or missing"},
		{strings.Replace(goodManifest, "format_version: 1\n", "", 1), "format_version is 0, want 1"},
		{"[1, 2]", "cannot unmarshal !!seq into dataset.Manifest"},
	} {
		_, err := ParseManifest([]byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("manifest %q: error %v, want one line containing %q", c.text, err, c.want)
		}
	}
}

// FuzzParseManifest: arbitrary text must not panic, and an accepted manifest
// must survive marshal and parse unchanged.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(goodManifest))
	f.Add([]byte("format_version: 1\nnum_nodes: 1\nfeat_dim: 1\nnum_classes: 1\nnum_train: 1\n"))
	f.Add([]byte("format_version: 1\nname: &a x\nsource: *a\n"))
	f.Add([]byte("{format_version: 1, num_nodes: 0x10, feat_dim: 1e3}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseManifest(in)
		if err != nil {
			return
		}
		text, err := m.marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := ParseManifest(text)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", text, err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip: %+v became %+v", m, again)
		}
	})
}

package dataset

import (
	"strings"
	"testing"

	"fmt"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// edited is goodManifest with old replaced by new (which must be there).
func edited(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(goodManifest, old) {
		t.Fatalf("manifest lacks %q", old)
	}
	return strings.Replace(goodManifest, old, new, 1)
}

// TestManifestFieldsChecked: every field is checked for its type, range
// and known values, with one line naming the field.
func TestManifestFieldsChecked(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{edited(t, "num_nodes: 16384", "num_nodes: 16384.5"), `line 5: num_nodes is "16384.5", want an integer`},
		{edited(t, "feat_dim: 32", "feat_dim: 32.0"), `line 8: feat_dim is "32.0", want an integer`},
		{edited(t, "num_classes: 8", "num_classes: 8e0"), `line 9: num_classes is "8e0", want an integer`},
		{edited(t, "feat_dim: 32", "feat_dim:"), "line 8: feat_dim has no value, want an integer"},
		{edited(t, "format_version: 1", "format_version: 1.0"), `line 2: format_version is "1.0", want an integer`},
		{edited(t, "symmetric: true", "symmetric: yes"), `line 7: symmetric is "yes", want true or false`},
		{edited(t, "symmetric: true", "symmetric: 1"), "line 7: cannot unmarshal !!int `1` into bool"},
		{edited(t, "num_nodes: 16384", "num_nodes: 1099511627777"), "num_nodes is 1099511627777, more than the 1099511627776 this format allows"},
		{edited(t, "num_edges: 398000", "num_edges: 9223372036854775807"), "num_edges is 9223372036854775807, more than"},
		{edited(t, "feat_dim: 32", "feat_dim: 16777217"), "feat_dim is 16777217, more than the 16777216"},
		{edited(t, "num_classes: 8", "num_classes: 16777217"), "num_classes is 16777217, more than the 16777216"},
		{strings.Replace(edited(t, "num_nodes: 16384", "num_nodes: 1099511627776"), "feat_dim: 32", "feat_dim: 16777216", 1),
			"num_nodes × feat_dim = 1099511627776 × 16777216 is more than"},
		{edited(t, "num_test: 11470", "num_test: 11471"), "num_train + num_valid + num_test = 3276 + 1638 + 11471 = 16385 exceeds num_nodes (16384)"},
		{edited(t, "name: tiny", `name: "a\nb"`), `name is "a\nb", want text on one line without control characters`},
		{edited(t, "name: tiny", "name: "+strings.Repeat("n", 256)), "name is \"" + strings.Repeat("n", 200) + "\"... (256 bytes), longer than 255 bytes"},
		{edited(t, "source: rmat tiny seed 1", `source: "rmat\ttiny"`), `source is "rmat\ttiny", want text on one line`},
		{edited(t, "name: tiny", "name: tiny\npreprocessing: [symmetrize, \" \"]"), `preprocessing entry 2 is " ", want a step's name`},
		{edited(t, "name: tiny", "name: tiny\npreprocessing: [\"dedup\\r\"]"), `preprocessing entry 1 is "dedup\r", want text on one line`},
		{edited(t, "name: tiny", "name: tiny\nfeature_dtype: float16"), `feature_dtype is "float16", want float32 or bfloat16`},
		{edited(t, "name: tiny", "name: tiny\nnode_ids: ids.csv"), `node_ids is "ids.csv", want ids.npy or ids.txt`},
		// The manifest's one path field names a file inside the dataset.
		{edited(t, "name: tiny", "name: tiny\nnode_ids: ../ids.npy"), `node_ids is "../ids.npy", want ids.npy or ids.txt`},
		{edited(t, "name: tiny", "name: tiny\nnode_ids: /etc/passwd"), `node_ids is "/etc/passwd", want ids.npy or ids.txt`},
	} {
		_, err := ParseManifest([]byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("manifest %q:\n error %v\n want one line containing %q", c.text, err, c.want)
		}
	}
}

// TestManifestMergeChecked: a value merged in (<<) or named by an alias is
// checked as one written in place.
func TestManifestMergeChecked(t *testing.T) {
	text := "base: &b {num_nodes: 10.5}\n" + goodManifest
	if _, err := ParseManifest([]byte(text)); err == nil || !strings.Contains(err.Error(), `unknown key "base"`) {
		t.Errorf("unknown key with an anchor: %v", err)
	}
	text = strings.Replace(goodManifest, "num_nodes: 16384\n", "", 1) + "<<: {num_nodes: 10.5}\n"
	if _, err := ParseManifest([]byte(text)); err == nil || !strings.Contains(err.Error(), `num_nodes is "10.5", want an integer`) {
		t.Errorf("merged num_nodes: %v", err)
	}
	text = strings.Replace(goodManifest, "num_train: 3276", "num_train: &t 3276.5", 1)
	text = strings.Replace(text, "num_test: 11470", "num_test: *t", 1)
	if _, err := ParseManifest([]byte(text)); err == nil || !strings.Contains(err.Error(), `num_train is "3276.5"`) {
		t.Errorf("aliased count: %v", err)
	}
}

// TestManifestErrorsQuoteLittle: whatever field holds a long input, the
// error quotes at most quote.Limit bytes of it.
func TestManifestErrorsQuoteLittle(t *testing.T) {
	long := strings.Repeat("x", 100000)
	for _, text := range []string{
		edited(t, "name: tiny", "name: tiny\n"+long+": 1"),
		edited(t, "name: tiny", "name: tiny\nname: "+long),
		edited(t, "name: tiny", "name: tiny\n"+long+": 1\n"+long+": 2"),
		edited(t, "name: tiny", "name: "+long),
		edited(t, "source: rmat tiny seed 1", "source: "+long),
		edited(t, "name: tiny", "name: tiny\npreprocessing: ["+long+"]"),
		edited(t, "name: tiny", "name: tiny\nfeature_dtype: "+long),
		edited(t, "name: tiny", "name: tiny\nnode_ids: "+long),
		edited(t, "num_nodes: 16384", "num_nodes: "+long),
		edited(t, "num_nodes: 16384", "num_nodes: 1."+long),
		edited(t, "symmetric: true", "symmetric: "+long),
		edited(t, "name: tiny", "name: *"+long),
		edited(t, "name: tiny", "name: [&"+long+" a, &"+long+" b]"),
		goodManifest + manyKeys(2000), // one line, not one per key
	} {
		_, err := ParseManifest([]byte(text))
		if err == nil {
			t.Errorf("manifest of %d bytes: no error", len(text))
			continue
		}
		if msg := err.Error(); strings.Contains(msg, strings.Repeat("x", quote.Limit+1)) || len(msg) > quote.Limit+200 {
			t.Errorf("error of %d bytes quotes too much: %.300s", len(msg), msg)
		}
	}
}

// TestValidateChecksManifest: a dataset in memory whose manifest Open would
// refuse is not valid, so Write cannot write one.
func TestValidateChecksManifest(t *testing.T) {
	for _, c := range []struct {
		mutate func(d *Dataset)
		want   string
	}{
		{func(d *Dataset) { d.Source = "a\xffb" }, `manifest.yaml: source is "a\xffb", which is not UTF-8 text`},
		{func(d *Dataset) { d.Name = "two\nlines" }, `manifest.yaml: name is "two\nlines", want text on one line`},
		{func(d *Dataset) { d.Preprocessing = []string{""} }, `manifest.yaml: preprocessing entry 1 is "", want a step's name`},
		{func(d *Dataset) { d.NumClasses = MaxClasses + 1 }, "manifest.yaml: num_classes is 16777217, more than"},
	} {
		d := ring(10)
		c.mutate(d)
		err := d.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want prefix %q", err, c.want)
		}
		if err := Write(t.TempDir()+"/ds", d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Write: error %v, want %q", err, c.want)
		}
	}
}

// manyKeys is n unknown manifest keys, one a line.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "unknown_%d: 1\n", i)
	}
	return b.String()
}

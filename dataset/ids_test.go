package dataset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNodeIDsRoundTrip: integer and string ids are written beside the
// arrays, named by the manifest, read back by ReadIDs, and a dataset with
// ids is replaced like any other.
func TestNodeIDsRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d := ring(10)
	if ids, err := ReadIDs(dir); ids != nil || err == nil {
		t.Fatalf("ReadIDs of no dataset: %v, %v", ids, err)
	}
	d.IDs = &NodeIDs{Ints: []int64{5, 1 << 62, 7, 8, 9, 10, 11, 12, 13, -4}}
	if err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	got, err := ReadIDs(dir)
	if err != nil || !slices.Equal(got.Ints, d.IDs.Ints) {
		t.Fatalf("ReadIDs: %v, %v", got, err)
	}
	o, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info := o.Info().String(); !strings.Contains(info, "ids        the original ids in ids.npy (64-bit integers)") {
		t.Errorf("info of a dataset with ids:\n%s", info)
	}
	o.Close()
	names := make([]string, 10)
	for i := range names {
		names[i] = "vertex " + string(rune('a'+i))
	}
	d.IDs = &NodeIDs{Strings: names}
	if err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadIDs(dir); err != nil || !slices.Equal(got.Strings, names) {
		t.Fatalf("ReadIDs: %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, IDsFile)); err == nil {
		t.Errorf("%s of the replaced dataset is left", IDsFile)
	}
	d.IDs = nil
	if err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadIDs(dir); got != nil || err != nil {
		t.Fatalf("ReadIDs of a dataset without ids: %v, %v", got, err)
	}
}

func TestNodeIDsValidated(t *testing.T) {
	d := ring(4)
	for _, c := range []struct {
		ids  *NodeIDs
		want string
	}{
		{&NodeIDs{Ints: []int64{1, 2, 3}}, "3 ids, want num_nodes = 4"},
		{&NodeIDs{Strings: []string{"a", "b\nc", "d", "e"}}, "line break"},
		{&NodeIDs{}, "one of the two"},
	} {
		d.IDs = c.ids
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.ids, err, c.want)
		}
	}
	if _, err := ParseManifest([]byte("format_version: 1\nfeat_dim: 1\nnum_classes: 1\nnum_train: 1\nnum_nodes: 1\nnode_ids: x.npy\n")); err == nil || !strings.Contains(err.Error(), `node_ids is "x.npy"`) {
		t.Errorf("node_ids: x.npy: %v", err)
	}
}

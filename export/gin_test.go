package export

import "testing"

// TestPyGGINSum: the export records GIN's training fanouts, and its sums
// are PyG's (exact) only when every layer was trained on all neighbours.
func TestPyGGINSum(t *testing.T) {
	for _, tc := range []struct{ fanouts, sum string }{
		{"", "exact"},
		{"-1,-1", "exact"},
		{"-1,10", "capped"},
		{"15,10", "capped"},
	} {
		c := sampleCheckpoint("gin")
		c.Config.GINFanouts = tc.fanouts
		_, meta, err := PyG(*c)
		if err != nil {
			t.Fatal(err)
		}
		if meta["gin_sum"] != tc.sum || meta["gin_fanouts"] != tc.fanouts {
			t.Errorf("GINFanouts %q: gin_sum %q, gin_fanouts %q; want %q, %q", tc.fanouts, meta["gin_sum"], meta["gin_fanouts"], tc.sum, tc.fanouts)
		}
	}
	_, meta, err := PyG(*sampleCheckpoint("sage"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := meta["gin_sum"]; ok {
		t.Errorf("GraphSAGE's export has gin_sum %q", meta["gin_sum"])
	}
}

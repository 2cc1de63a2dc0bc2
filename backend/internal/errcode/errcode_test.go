package errcode

import (
	"strings"
	"testing"
)

// TestErr: a record's error names the backend and the op and formats the
// record's values where its message says (RELABEL_ID takes them out of
// order); an unknown code keeps its number and values.
func TestErr(t *testing.T) {
	for _, tc := range []struct {
		code    Code
		x, y, z int64
		want    string
	}{
		{LinkEdge, 3, 99, 7, "cuda: EdgeSeeds: ids[3] = 99 outside the 7 pairs"},
		{RelabelID, 5, 1234, 0, "cuda: Relabel: vertex id 1234 at position 5 outside the graph"},
		{AdamStep, 0, 0, 0, "cuda: Adam: step t = 0, want >= 1"},
		{Code(999), 1, 2, 3, "cuda: kernel error 999 (1, 2, 3)"},
	} {
		if got := tc.code.Err("cuda", tc.x, tc.y, tc.z).Error(); got != tc.want {
			t.Errorf("code %d: %q, want %q", tc.code, got, tc.want)
		}
	}
	for c := Code(1); c < 64; c++ {
		if c.Op() == "" {
			continue
		}
		if msg := c.Message(1, 2, 3); strings.Contains(msg, "%!") {
			t.Errorf("code %d (%s): message %q", c, c.Op(), msg)
		}
	}
}

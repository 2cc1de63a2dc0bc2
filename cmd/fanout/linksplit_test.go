package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
)

// TestGenLinkSplit: gen --link-split stores a link task that Open
// validates and info shows; a bad split is refused before any work.
func TestGenLinkSplit(t *testing.T) {
	dir := genTiny(t, "--link-split", "0.8,0.1,0.1", "--link-negatives", "3", "--link-seed", "4")
	ds := openData(t, dir)
	l := ds.Link
	if l == nil || l.Negatives != 3 || dataset.Pairs(l.TestNeg) != 3*dataset.Pairs(l.Test) || dataset.Pairs(l.Valid) == 0 {
		t.Fatalf("link task %+v", l)
	}
	code, out, stderr := fanout(t, "info", dir)
	if code != 0 || !strings.Contains(out, "links      train ") || !strings.Contains(out, "3 fixed negatives") {
		t.Errorf("info: exit %d\n%s%s", code, out, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	oneLineError(t, "sum to", "gen", "tiny", "--out", bad, "--link-split", "0.8,0.1,0.2")
	oneLineError(t, "--link-negatives 0", "gen", "tiny", "--out", bad, "--link-split", "0.8,0.1,0.1", "--link-negatives", "0")
}

package cuda

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestHostFuncInOrder: a host function sees what the ops before it wrote
// into mapped host memory, and the ops after it read what it wrote, eagerly
// and as a host node of a captured graph, run once per replay.
func TestHostFuncInOrder(t *testing.T) {
	b := openTest(t, Options{})
	seen, doubled := []int32{-1, -1, -1, -1}, make([]int32, 4)
	seenB, err := b.UploadHost(seen)
	if err != nil {
		t.Fatal(err)
	}
	doubledB, err := b.UploadHost(doubled)
	if err != nil {
		t.Fatal(err)
	}
	table := upload(t, b, []int32{5, 6, 7, 8})
	ids := upload(t, b, []int32{3, 2, 1, 0})
	out := alloc(t, b, backend.I32, 4)
	n := countBuf(t, b, 4, 4)
	var runs atomic.Int32
	issue := func() {
		b.Gather(table, 1, ids, n, seenB)
		b.HostFunc(func() {
			runs.Add(1)
			for i, v := range seen {
				doubled[i] = 2 * v
			}
		})
		b.Gather(doubledB, 1, ids, n, out)
	}
	issue()
	if got := readI32(t, b, out, 4); !slices.Equal(got, []int32{10, 12, 14, 16}) || runs.Load() != 1 {
		t.Fatalf("eager: %v after %d runs, want [10 12 14 16] after 1", got, runs.Load())
	}
	g := captureGraph(t, b, issue)
	defer g.Close()
	if runs.Load() != 1 {
		t.Fatalf("the host function ran while captured (%d runs)", runs.Load())
	}
	for r, vals := range [][]int32{{1, 2, 3, 4}, {-3, 0, 9, 11}} {
		b.Write(table, 0, vals)
		g.Launch()
		want := []int32{2 * vals[0], 2 * vals[1], 2 * vals[2], 2 * vals[3]}
		if got := readI32(t, b, out, 4); !slices.Equal(got, want) || int(runs.Load()) != r+2 {
			t.Errorf("replay %d: %v after %d runs, want %v after %d", r, got, runs.Load(), want, r+2)
		}
	}
	b.Free(seenB)
	b.Free(doubledB)
}

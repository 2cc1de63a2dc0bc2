package cpu

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestOpsDoNotAllocate checks that steady-state ops allocate (almost)
// nothing on the Go heap: at most the closures handed to the worker pool (one per parallel phase).
func TestOpsDoNotAllocate(t *testing.T) {
	b := New(2)
	defer b.Close()
	const rows, in, out = 64, 32, 16
	x, _ := b.Alloc(backend.F32, rows*in)
	w, _ := b.Alloc(backend.F32, in*out)
	y, _ := b.Alloc(backend.F32, rows*out)
	cnt, _ := b.Upload([]int32{rows})
	n := backend.Count{Buf: cnt, Cap: rows}
	mask, _ := b.Alloc(backend.U8, rows*out)
	clock, _ := b.Upload([]int32{0, 0})
	r := backend.Rand{Seed: 1, Stream: 128, Clock: clock}
	ops := map[string]func(){
		"Linear":         func() { b.Linear(x, n, w, in, out, y, false) },
		"BiasActDropout": func() { b.BiasActDropout(y, n, out, nil, true, 0.5, r, mask, y) },
		"Fill":           func() { b.Fill(y, 0) },
	}
	for name, op := range ops {
		op()
		if allocs := testing.AllocsPerRun(20, op); allocs > 2 {
			t.Errorf("%s: %.0f allocations per call", name, allocs)
		}
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}

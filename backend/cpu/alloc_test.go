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
	checkAllocs(t, b, ops, 2)
}

// checkAllocs runs each op once, then fails the test for an op that
// allocates more than most times per call on average, or when b has
// recorded an error.
func checkAllocs(t *testing.T, b *Backend, ops map[string]func(), most float64) {
	t.Helper()
	for name, op := range ops {
		op()
		if allocs := testing.AllocsPerRun(50, op); allocs > most {
			t.Errorf("%s: %.1f allocations per call, want at most %g", name, allocs, most)
		}
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckedOpsDoNotAllocate: an op's generated argument checks (checkX,
// from the op descriptions) allocate nothing: ops whose work allocates
// nothing either make no allocation per call at all.
func TestCheckedOpsDoNotAllocate(t *testing.T) {
	b := New(1)
	defer b.Close()
	const rows, dim, k = 16, 8, 2
	x, _ := b.Alloc(backend.F32, rows*dim)
	y, _ := b.Alloc(backend.F32, rows*dim)
	out, _ := b.Alloc(backend.F32, 1)
	acc, _ := b.Alloc(backend.F32, 2)
	scores, _ := b.Alloc(backend.F32, rows*(1+k))
	dscores, _ := b.Alloc(backend.F32, rows*(1+k))
	cnt, _ := b.Upload([]int32{rows, 0, rows, 0})
	n := backend.Count{Buf: cnt, Cap: rows}
	c1, c3 := backend.Count{Buf: cnt, Off: 1, Cap: rows}, backend.Count{Buf: cnt, Off: 3, Cap: rows}
	clock, _ := b.Upload([]int32{0, 0})
	flag, _ := b.Alloc(backend.I32, 3)
	ops := map[string]func(){
		"DotSum":       func() { b.DotSum(x, y, n, dim, out) },
		"PairLoss":     func() { b.PairLoss(scores, backend.Count{Buf: cnt, Cap: rows / (1 + k)}, k, out, dscores, c1) },
		"AddCount":     func() { b.AddCount(c3, 1, nil) },
		"Accumulate":   func() { b.Accumulate(out, c1, acc, nil) },
		"FlagOverflow": func() { b.FlagOverflow(n, clock, flag) },
		"ScaleShare":   func() { b.ScaleShare(x, n, dim, n, n) },
	}
	checkAllocs(t, b, ops, 0)
}

package cuda

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestBeside: sampling issued on the side stream, beside sampling on the
// stream (eagerly, then in a captured graph replayed twice), gives the CPU
// backend's samples on both; the side uses scratch of its own; Beside
// refuses to nest.
func TestBeside(t *testing.T) {
	gpu := openTest(t, Options{})
	csr, seeds, fanouts := samplingCase(rand.New(rand.NewPCG(15, 16)))
	here := newSampler3(t, gpu, csr, seeds, fanouts)
	side := newSampler3(t, gpu, csr, seeds, fanouts)
	here.step(fanouts) // step 0 on the stream
	gpu.Beside(func() { side.step(fanouts) })
	gpu.Join()
	must(t, gpu)
	if p0, p1 := gpu.scratch[0][scratchScan].ptr, gpu.scratch[1][scratchScan].ptr; p1 == 0 || p1 == p0 {
		t.Fatalf("scan scratch: stream %#x, side %#x; want the side's own", p0, p1)
	}
	sameAsCPU(t, gpu, side, csr, seeds, fanouts, 0)

	replayTwice(t, gpu, func() { // steps 1 and 2
		gpu.Beside(func() { side.step(fanouts) })
		here.step(fanouts)
		gpu.Join()
	})
	sameAsCPU(t, gpu, here, csr, seeds, fanouts, 2)
	sameAsCPU(t, gpu, side, csr, seeds, fanouts, 2)

	gpu.Beside(func() { gpu.Beside(func() {}) })
	if err := gpu.Sync(); err == nil || !strings.Contains(err.Error(), "nest") {
		t.Fatalf("nested Beside: Sync returned %v, want an error saying Beside may not nest", err)
	}
}

// TestBesideJoinTo: the stream, after JoinTo of the first of two Beside
// calls, reads what the first sampled (its bottom hop's sources, gathered
// through an identity table) while the second samples beside; eagerly and
// in a captured graph replayed twice, both samples and the gathered ids are
// the CPU backend's. JoinTo of the zero mark or of a joined one issues
// nothing, of the side's last work is a whole Join, and of a mark no
// Beside call returned is an error.
func TestBesideJoinTo(t *testing.T) {
	gpu := openTest(t, Options{})
	csr, seeds, fanouts := samplingCase(rand.New(rand.NewPCG(17, 18)))
	first := newSampler3(t, gpu, csr, seeds, fanouts)
	second := newSampler3(t, gpu, csr, seeds, fanouts)
	ident := make([]int32, csr.NumNodes)
	for v := range ident {
		ident[v] = int32(v)
	}
	table := upload(t, gpu, ident)
	top := first.blocks[len(fanouts)-1] // the last hop: the bottom block's sources
	got := alloc(t, gpu, backend.I32, top.SrcIDs.Len())
	issue := func() {
		m1 := gpu.Beside(func() { first.step(fanouts) })
		m2 := gpu.Beside(func() { second.step(fanouts) })
		if m1 == 0 || m2 <= m1 {
			t.Errorf("marks %d then %d; want two increasing non-zero marks", m1, m2)
		}
		gpu.JoinTo(m1)
		if !gpu.side.open || gpu.side.joined != uint64(m1) {
			t.Errorf("after JoinTo(%d): open %v, joined %d; want the second call still open", m1, gpu.side.open, gpu.side.joined)
		}
		gpu.Gather(table, 1, top.SrcIDs, top.NumSrc, got)
		gpu.JoinTo(m1) // joined already: nothing to issue
		gpu.JoinTo(m2) // the side's last work: a whole join
		if gpu.side.open {
			t.Errorf("after JoinTo of the last mark the side is still open")
		}
	}
	check := func(step int32) {
		t.Helper()
		sameAsCPU(t, gpu, first, csr, seeds, fanouts, step)
		sameAsCPU(t, gpu, second, csr, seeds, fanouts, step)
		n := readCount(t, gpu, top.NumSrc)
		equalI32(t, "gathered sources", readI32(t, gpu, got, n), readI32(t, gpu, top.SrcIDs, n))
	}
	issue() // step 0
	must(t, gpu)
	check(0)
	replayTwice(t, gpu, issue) // steps 1 and 2
	check(2)

	gpu.JoinTo(0)
	must(t, gpu)
	gpu.JoinTo(backend.SideMark(gpu.side.calls + 1))
	if err := gpu.Sync(); err == nil || !strings.Contains(err.Error(), "not from a Beside call") {
		t.Fatalf("JoinTo of an unknown mark: Sync returned %v, want an error naming it", err)
	}
}

// TestBesideProducts: weight gradients (cuBLAS's split-k products, which
// use its workspace) issued beside a product on the stream, eagerly and in
// a captured graph replayed twice, give the bits each gives alone; the
// side stream multiplies with a cuBLAS handle and workspace of its own.
func TestBesideProducts(t *testing.T) {
	gpu := openTest(t, Options{})
	r := rand.New(rand.NewPCG(19, 20))
	const rows, in, out = 4096, 64, 48
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	x, dy, w := upload(t, gpu, rnd(rows*in)), upload(t, gpu, rnd(rows*out)), upload(t, gpu, rnd(in*out))
	n := countBuf(t, gpu, rows, rows)
	alone, y := alloc(t, gpu, backend.F32, in*out), alloc(t, gpu, backend.F32, rows*out)
	gpu.LinearBackwardWeight(x, dy, n, in, out, alone, false)
	want := readF32(t, gpu, alone, in*out)
	for _, mode := range []string{"eager", "replayed"} {
		dw := alloc(t, gpu, backend.F32, in*out)
		issue := func() {
			gpu.Beside(func() { gpu.LinearBackwardWeight(x, dy, n, in, out, dw, false) })
			gpu.Linear(x, n, w, in, out, y, false)
			gpu.Join()
		}
		if mode == "eager" {
			issue()
			must(t, gpu)
		} else {
			replayTwice(t, gpu, issue)
		}
		got := readF32(t, gpu, dw, in*out)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: dw[%d] = %v beside, %v alone", mode, i, got[i], want[i])
			}
		}
	}
	if s := gpu.side.blas; s == nil || s.handle == 0 || s.handle == gpu.blas.handle {
		t.Fatalf("side stream's cuBLAS handle %+v: want one of its own", s)
	}
}

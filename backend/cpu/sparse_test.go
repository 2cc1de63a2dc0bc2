package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu/vec"
)

// TestAggregateBackwardOrder requires AggregateBackward to equal, bit for
// bit, the serial scatter in destination order (self term, then edges) that
// its documentation defines, for 1 and 3 threads.
func TestAggregateBackwardOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const nDst, nSrc, dim = 300, 700, 19
	indptr := make([]int32, nDst+1)
	var indices []int32
	for i := range nDst {
		for range r.IntN(9) {
			// Favour low source ids so that destinations also receive edges.
			indices = append(indices, int32(r.IntN(1+r.IntN(nSrc))))
		}
		indptr[i+1] = int32(len(indices))
	}
	ne := len(indices)
	ew, sw := randF32(r, ne), randF32(r, nDst)
	dout, dx0 := randF32(r, nDst*dim), randF32(r, nSrc*dim)

	want := append([]float32(nil), dx0...)
	for i := range nDst {
		vec.Axpy(sw[i], dout[i*dim:(i+1)*dim], want[i*dim:])
		for e := indptr[i]; e < indptr[i+1]; e++ {
			j := int(indices[e])
			vec.Axpy(ew[e], dout[i*dim:(i+1)*dim], want[j*dim:])
		}
	}
	for _, threads := range []int{1, 3} {
		b := New(threads)
		up := func(s any) backend.Buffer {
			buf, err := b.Upload(s)
			if err != nil {
				t.Fatal(err)
			}
			return buf
		}
		blk := &backend.Block{
			NumDst:   backend.Count{Buf: up([]int32{nDst}), Cap: nDst},
			NumEdges: backend.Count{Buf: up([]int32{int32(ne)}), Cap: ne},
			NumSrc:   backend.Count{Buf: up([]int32{nSrc}), Cap: nSrc},
			Indptr:   up(indptr), Indices: up(indices),
		}
		dx := up(append([]float32(nil), dx0...))
		b.AggregateBackward(blk, up(ew), up(sw), up(dout), dim, dx)
		if err := b.Sync(); err != nil {
			t.Fatal(err)
		}
		got := F32(dx)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d threads: dx[%d] = %g, serial scatter %g", threads, i, got[i], want[i])
			}
		}
		b.Close()
	}
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// testBipartite checks the ops a typed graph's relation uses over a
// bipartite block (Block.Bipartite: sources of another type, fewer of them
// than destinations): MeanWeights, Aggregate and AggregateBackward equal
// the references, and AggregateBackward writes no row past the sources'
// capacity (dx is a view of a larger buffer whose tail must stay as it
// was).
func testBipartite(e *env) {
	for _, dim := range []int{1, 16, 33} {
		name := fmt.Sprintf("Bipartite dim=%d", dim)
		h := e.randomBlock(60, 10)
		blk := e.uploadBlock(h)
		blk.Bipartite = true
		ew := e.poison(h.capEdges)
		e.be.MeanWeights(blk, ew)
		w := e.readF32(ew, h.capEdges)
		x := e.randF32(h.capSrc*dim, 1)
		out := e.poison(h.capDst * dim)
		e.be.Aggregate(blk, ew, nil, e.upload(x), dim, out)
		want, scale := aggRef(h, w, nil, x, dim)
		e.checkClose(name+" Aggregate", e.readF32(out, h.nDst*dim), want, scale, tolSum, dim)

		const guard = 4096
		dout := e.randF32(h.capDst*dim, 1)
		whole := e.alloc(backend.F32, h.capSrc*dim+guard, 7)
		dx := e.be.View(whole, 0, h.capSrc*dim)
		e.be.AggregateBackward(blk, ew, nil, e.upload(dout), dim, dx)
		back, bscale := make([]float64, h.nSrc*dim), make([]float64, h.nSrc*dim)
		for i := range back {
			back[i], bscale[i] = 7, 7
		}
		for i := range h.nDst {
			for k := h.indptr[i]; k < h.indptr[i+1]; k++ {
				j := int(h.indices[k])
				for c := range dim {
					t := float64(w[k]) * float64(dout[i*dim+c])
					back[j*dim+c] += t
					bscale[j*dim+c] += math.Abs(t)
				}
			}
		}
		got := e.readF32(whole, h.capSrc*dim+guard)
		e.checkClose(name+" AggregateBackward", got[:h.nSrc*dim], back, bscale, tolSum, dim)
		for k, v := range got[h.capSrc*dim:] {
			if v != 7 {
				e.t.Errorf("%s AggregateBackward: element %d past dx (%d rows of %d) was written (%g)", name, k, h.capSrc, dim, v)
				break
			}
		}
	}
}

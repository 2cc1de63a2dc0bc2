package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// testAggregateConcatTable checks that reading a block's source rows from a
// feature table in place (float32 and bfloat16 tables) writes the same bits
// as gathering them and aggregating the gathered rows, that rows past the
// live destinations are left alone, and that an id outside the table is an
// error.
func testAggregateConcatTable(e *env) {
	const tableRows = 300
	for _, bf16 := range []bool{false, true} {
		for _, dim := range []int{1, 16, 33, 100} {
			name := fmt.Sprintf("AggregateConcatTable dim=%d bfloat16=%v", dim, bf16)
			vals := e.randF32(tableRows*dim, 1)
			var table backend.Buffer
			if bf16 {
				table = e.upload(backend.ToBF16(vals))
			} else {
				table = e.upload(vals)
			}
			h, blk, _ := e.tableBlock(tableRows)
			ew := e.upload(e.randF32(h.capEdges, 1))

			x := e.poison(h.capSrc * dim)
			e.be.Gather(table, dim, blk.SrcIDs, blk.NumSrc, x)
			want := e.poison(h.capDst * 2 * dim)
			e.be.AggregateConcat(blk, ew, x, dim, want)
			got := e.poison(h.capDst * 2 * dim)
			e.be.AggregateConcatTable(blk, ew, table, dim, got)
			if err := e.be.Sync(); err != nil {
				e.t.Fatalf("%s: %v", name, err)
			}
			g, w := e.readF32(got, h.capDst*2*dim), e.readF32(want, h.nDst*2*dim)
			checkEqual(e.t, name, f32bits(g[:len(w)]), f32bits(w), 2*dim)
			for k, v := range g[len(w):] {
				if !math.IsNaN(float64(v)) {
					e.t.Errorf("%s: element %d past the live rows was written (%g)", name, len(w)+k, v)
					break
				}
			}
		}
	}
}

// tableBlock draws a random block whose sources are rows of a table of
// tableRows vertices: SrcIDs (ids) random rows, -7 past the live sources
// (must not be read).
func (e *env) tableBlock(tableRows int) (h hostBlock, blk *backend.Block, ids []int32) {
	h = e.randomBlock(40, 90)
	ids = make([]int32, h.capSrc)
	for j := range ids {
		ids[j] = int32(e.rnd.IntN(tableRows))
	}
	for j := h.nSrc; j < h.capSrc; j++ {
		ids[j] = -7
	}
	blk = e.uploadBlock(h)
	blk.SrcIDs = e.upload(ids)
	return h, blk, ids
}

func f32bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// The ops of a GAT layer that aggregates before it projects
// (SharedAggregate, BlockDiag and their backwards) against float64
// references, on the attention blocks of gat.go (invalid sources, a
// destination without edges, bipartite blocks), with float32 and bfloat16
// inputs.

// sharedAggCase is one shape: heads reading rows in wide.
type sharedAggCase struct {
	heads, in int
	bf16, bip bool
}

// The CUDA kernel sums 8 heads and 128 columns per pass: {4, 100} is
// products-sim's bottom layer, {9, 130} and {12, 300} take more than one
// pass of each.
var sharedAggCases = []sharedAggCase{{1, 1, false, false}, {3, 5, false, false}, {4, 100, false, false},
	{4, 100, true, false}, {9, 130, false, false}, {12, 300, true, false}, {2, 33, false, true}, {4, 100, true, true},
	{8, 32, false, false}, {1, 128, true, false}}

// sharedAggInputs draws a block, coefficients and x for c: x as uploaded
// (bfloat16 bits with bf16) and its values as the ops read them.
func (e *env) sharedAggInputs(c sharedAggCase) (h hostBlock, blk *backend.Block, coef []float32, xb backend.Buffer, x []float32) {
	h = e.attBlock(40, 90)
	if c.bip {
		h = e.attBlock(60, 25)
	}
	blk = e.uploadBlock(h)
	blk.Bipartite = c.bip
	x = e.randF32(h.capSrc*c.in, 1)
	xb = e.upload(x)
	if c.bf16 {
		bits := backend.ToBF16(x)
		for k, v := range bits {
			x[k] = backend.BF16Float(v)
		}
		xb = e.upload(bits)
	}
	return h, blk, e.randF32((h.capDst+h.capEdges)*c.heads, 1), xb, x
}

// testSharedAggregate: out against Σ coef·x in float64.
func testSharedAggregate(e *env) {
	for _, c := range sharedAggCases {
		name := fmt.Sprintf("SharedAggregate %+v", c)
		h, blk, coef, xb, x := e.sharedAggInputs(c)
		w := c.heads * c.in
		want, scale := make([]float64, h.nDst*w), make([]float64, h.nDst*w)
		for i := range h.nDst {
			src, rows := attPos(h, i, c.bip)
			for k, j := range src {
				if j < 0 {
					continue
				}
				for hd := range c.heads {
					for f := range c.in {
						t := float64(coef[rows[k]*c.heads+hd]) * float64(x[j*c.in+f])
						want[i*w+hd*c.in+f] += t
						scale[i*w+hd*c.in+f] += math.Abs(t)
					}
				}
			}
		}
		out := e.poison(h.capDst * w)
		e.att().SharedAggregate(blk, e.upload(coef), xb, c.heads, c.in, out)
		e.checkClose(name, e.readF32(out, h.nDst*w), want, scale, tolSum, w)
	}
}

// testSharedAggregateBackward: dcoef of every live position against the
// float64 dots, 0 where the position has no live source.
func testSharedAggregateBackward(e *env) {
	for _, c := range sharedAggCases {
		name := fmt.Sprintf("SharedAggregateBackward %+v", c)
		h, blk, _, xb, x := e.sharedAggInputs(c)
		w := c.heads * c.in
		dout := e.randF32(h.capDst*w, 1)
		dcoef := e.poison((h.capDst + h.capEdges) * c.heads)
		e.att().SharedAggregateBackward(blk, xb, e.upload(dout), c.heads, c.in, dcoef)
		all := e.readF32(dcoef, (h.capDst+h.capEdges)*c.heads)
		var got []float32
		var want, scale []float64
		for i := range h.nDst {
			src, rows := attPos(h, i, c.bip)
			for k, j := range src {
				for hd := range c.heads {
					var s, m float64
					for f := 0; j >= 0 && f < c.in; f++ {
						t := float64(dout[i*w+hd*c.in+f]) * float64(x[j*c.in+f])
						s, m = s+t, m+math.Abs(t)
					}
					got, want, scale = append(got, all[rows[k]*c.heads+hd]), append(want, s), append(scale, m)
				}
			}
		}
		e.checkClose(name, got, want, scale, tolSum, 0)
	}
}

// testBlockDiag: BlockDiag places each head's columns on the diagonal and
// zeros elsewhere, and BlockDiagBackward takes the diagonal blocks back,
// bit for bit (copies).
func testBlockDiag(e *env) {
	for _, s := range [][3]int{{1, 1, 1}, {3, 4, 5}, {5, 100, 64}, {2, 7, 33}} {
		in, heads, dim := s[0], s[1], s[2]
		wd := heads * dim
		w := e.randF32(in*wd, 1)
		wbd := e.poison(heads * in * wd)
		e.att().BlockDiag(e.upload(w), in, heads, dim, wbd)
		want := make([]float32, heads*in*wd)
		for h := range heads {
			for f := range in {
				copy(want[(h*in+f)*wd+h*dim:(h*in+f)*wd+(h+1)*dim], w[f*wd+h*dim:f*wd+(h+1)*dim])
			}
		}
		checkEqual(e.t, fmt.Sprintf("BlockDiag %v", s), e.readF32(wbd, len(want)), want, wd)
		dwbd := e.randF32(heads*in*wd, 1)
		dw := e.poison(in * wd)
		e.att().BlockDiagBackward(e.upload(dwbd), in, heads, dim, dw)
		wantD := make([]float32, in*wd)
		for f := range in {
			for c := range wd {
				wantD[f*wd+c] = dwbd[((c/dim)*in+f)*wd+c]
			}
		}
		checkEqual(e.t, fmt.Sprintf("BlockDiagBackward %v", s), e.readF32(dw, len(wantD)), wantD, wd)
	}
}

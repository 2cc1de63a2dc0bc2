package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// Finite-difference checks of the graph attention ops one at a time, on the
// hand-drawn golden block (destination 2 has no edges; destination 3 has
// destinations among its sources), and the same block as a bipartite one
// (no self loops, as a relational GAT hands its relations over). The
// objective is Σ out·R over live outputs; the backward op, given R as the
// output gradient, must give its derivatives.

// livePositions are the coefficient rows of hb's live self loops (none
// where bip) and edges.
func livePositions(hb hostBlock, bip bool) []int {
	var rows []int
	for i := range hb.nDst {
		if !bip {
			rows = append(rows, i)
		}
	}
	for e := range hb.nEdges() {
		rows = append(rows, hb.caps.Dst+e)
	}
	return rows
}

// perHead expands rows to the elements of heads columns each.
func perHead(rows []int, heads int) []int {
	var idx []int
	for _, r := range rows {
		for h := range heads {
			idx = append(idx, r*heads+h)
		}
	}
	return idx
}

// dotAt is Σ a[i]·b[i] over the indices idx, in float64.
func dotAt(a, b []float32, idx []int) float64 {
	s := 0.0
	for _, i := range idx {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHeadDotGrad(t *testing.T) {
	be := cpuBackend(t)
	const capRows, live, heads, dim = 6, 4, 3, 5
	r := rand.New(rand.NewPCG(11, 12))
	x := upload(t, be, randMatrix(r, capRows, live, heads*dim))
	a := upload(t, be, randMatrix(r, 1, 1, heads*dim))
	n := backend.Count{Buf: upload(t, be, []int32{live}), Cap: capRows}
	R := randMatrix(r, capRows, live, heads)
	out := alloc(t, be, backend.F32, capRows*heads)
	f := func() float64 {
		be.HeadDot(x, n, heads, dim, a, out)
		return dot(readF32(be, out), R, live*heads)
	}
	dx := upload(t, be, make([]float32, capRows*heads*dim))
	da := alloc(t, be, backend.F32, heads*dim)
	rb, none := upload(t, be, R), alloc(t, be, backend.F32, heads*dim)
	noRows := backend.Count{Buf: upload(t, be, []int32{0}), Cap: capRows}
	be.HeadDotBackward(x, rb, rb, n, noRows, heads, dim, a, a, dx, true, da, none)
	syncOK(t, be)
	checkGrad(t, be, "dx", x, liveIdx(live*heads*dim), readF32(be, dx), f)
	checkGrad(t, be, "da", a, liveIdx(heads*dim), readF32(be, da), f)
}

func TestEdgeSoftmaxGrad(t *testing.T) {
	be := cpuBackend(t)
	hb := goldenBlock()
	clock := upload(t, be, []int32{1, 3})
	for _, tc := range []struct {
		heads int
		p     float32
		bip   bool
	}{{1, 0, false}, {3, 0, false}, {2, 0.4, false}, {3, 0, true}, {2, 0.4, true}} {
		t.Run(fmt.Sprintf("heads=%d/p=%v/bipartite=%t", tc.heads, tc.p, tc.bip), func(t *testing.T) {
			blk := hb.upload(t, be)
			blk.Bipartite = tc.bip
			r := rand.New(rand.NewPCG(21, uint64(tc.heads)))
			H, c := tc.heads, hb.caps
			el := upload(t, be, randMatrix(r, c.Src, hb.nSrc(), H))
			er := upload(t, be, randMatrix(r, c.Dst, hb.nDst, H))
			rnd := backend.Rand{Seed: 6, Stream: attnDropoutStream, Clock: clock, Keys: blk.SrcIDs}
			pos := perHead(livePositions(hb, tc.bip), H)
			R := make([]float32, (c.Dst+c.Edges)*H)
			for _, i := range pos {
				R[i] = float32(2*r.Float64() - 1)
			}
			coef := alloc(t, be, backend.F32, (c.Dst+c.Edges)*H)
			f := func() float64 {
				be.EdgeSoftmax(blk, el, er, H, gatSlope, tc.p, rnd, coef)
				return dotAt(readF32(be, coef), R, pos)
			}
			del, der := alloc(t, be, backend.F32, c.Src*H), alloc(t, be, backend.F32, c.Dst*H)
			be.EdgeSoftmaxBackward(blk, el, er, H, gatSlope, tc.p, rnd, upload(t, be, R), del, der)
			syncOK(t, be)
			checkGrad(t, be, "del", el, liveIdx(hb.nSrc()*H), readF32(be, del), f)
			checkGrad(t, be, "der", er, liveIdx(hb.nDst*H), readF32(be, der), f)
		})
	}
}

func TestHeadAggregateGrad(t *testing.T) {
	be := cpuBackend(t)
	hb := goldenBlock()
	for _, tc := range []struct {
		heads, dim int
		mean, bip  bool
	}{{1, 3, false, false}, {2, 3, false, false}, {3, 2, true, false}, {2, 3, false, true}, {3, 2, true, true}} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			blk := hb.upload(t, be)
			blk.Bipartite = tc.bip
			r := rand.New(rand.NewPCG(31, uint64(tc.heads)))
			H, w, ow, c := tc.heads, tc.heads*tc.dim, tc.heads*tc.dim, hb.caps
			if tc.mean {
				ow = tc.dim
			}
			pos := perHead(livePositions(hb, tc.bip), H)
			coefHost := make([]float32, (c.Dst+c.Edges)*H)
			for _, i := range pos {
				coefHost[i] = float32(r.Float64())
			}
			coef := upload(t, be, coefHost)
			x := upload(t, be, randMatrix(r, c.Src, hb.nSrc(), w))
			R := randMatrix(r, c.Dst, hb.nDst, ow)
			out := alloc(t, be, backend.F32, c.Dst*ow)
			f := func() float64 {
				be.HeadAggregate(blk, coef, x, H, tc.dim, tc.mean, out, false)
				return dot(readF32(be, out), R, hb.nDst*ow)
			}
			dcoef := alloc(t, be, backend.F32, (c.Dst+c.Edges)*H)
			dx := upload(t, be, make([]float32, c.Src*w))
			be.HeadAggregateBackward(blk, coef, x, upload(t, be, R), H, tc.dim, tc.mean, dcoef, dx)
			syncOK(t, be)
			checkGrad(t, be, "dcoef", coef, pos, readF32(be, dcoef), f)
			checkGrad(t, be, "dx", x, liveIdx(hb.nSrc()*w), readF32(be, dx), f)
		})
	}
}

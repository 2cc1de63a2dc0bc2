package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// Benchmarks of the dense part of a products-sim step at its replay
// envelope (capacities from docs/perf.md, live rows about the mean): one
// SAGE layer's Linear ops with bias, ReLU and dropout around them on the
// capacity path (as captured), the backward of bias+ReLU+dropout, and the
// model's Adam update.

// sageShape is one SAGE layer: capacity and live destination rows, widths.
type sageShape struct {
	name               string
	cap, live, in, out int
	dx                 bool // the layer propagates a gradient to its input
}

var sageShapes = []sageShape{
	{"bottom", 59220, 49600, 100, 256, false},
	{"middle", 9643, 8000, 256, 256, true},
}

// BenchmarkSAGELayerCapacity: forward (two products into one output, then
// bias+ReLU+dropout) and backward (its backward, two weight gradients,
// and for the middle layer the input gradient) on the capacity path.
func BenchmarkSAGELayerCapacity(b *testing.B) {
	for _, s := range sageShapes {
		b.Run(s.name, func(b *testing.B) {
			be := openTest(b, Options{CapacityGemm: true})
			r := rand.New(rand.NewPCG(71, 72))
			x := upload(b, be, randF32(r, s.cap*s.in))
			agg := upload(b, be, randF32(r, s.cap*s.in))
			h := alloc(b, be, backend.F32, s.cap*s.out)
			dh := upload(b, be, randF32(r, s.cap*s.out))
			mask := alloc(b, be, backend.U8, s.cap*s.out)
			dAgg := alloc(b, be, backend.F32, s.cap*s.in)
			dx := alloc(b, be, backend.F32, (s.cap+s.cap/4)*s.in)
			wS, wN := upload(b, be, randF32(r, s.in*s.out)), upload(b, be, randF32(r, s.in*s.out))
			gS, gN := alloc(b, be, backend.F32, s.in*s.out), alloc(b, be, backend.F32, s.in*s.out)
			bias, gb := upload(b, be, randF32(r, s.out)), alloc(b, be, backend.F32, s.out)
			clock := upload(b, be, []int32{0, 1})
			n := countBuf(b, be, s.live, s.cap)
			dxDst := be.View(dx, 0, s.cap*s.in)
			rnd := backend.Rand{Seed: 1, Stream: 128, Clock: clock}
			measure(b, be, 0, func() {
				be.Linear(x, n, wS, s.in, s.out, h, false)
				be.Linear(agg, n, wN, s.in, s.out, h, true)
				be.BiasActDropout(h, n, s.out, bias, true, 0.5, rnd, mask, h)
				be.BiasActDropoutBackward(dh, h, n, s.out, true, 0.5, mask, dh, gb)
				be.LinearBackwardWeight(x, dh, n, s.in, s.out, gS, false)
				be.LinearBackwardWeight(agg, dh, n, s.in, s.out, gN, false)
				if s.dx {
					be.LinearBackwardData(dh, n, wN, s.in, s.out, dAgg, false)
					be.Fill(dx, 0)
					be.LinearBackwardData(dh, n, wS, s.in, s.out, dxDst, true)
				}
			})
		})
	}
}

// BenchmarkBiasActDropoutBackward at the bottom layer's activations.
func BenchmarkBiasActDropoutBackward(b *testing.B) {
	const cp, live, dim = 59220, 49600, 256
	be := openTest(b, Options{})
	r := rand.New(rand.NewPCG(73, 74))
	dy := upload(b, be, randF32(r, cp*dim))
	m := make([]uint8, cp*dim)
	for i := range m {
		m[i] = uint8(r.IntN(2))
	}
	mask, dx, db := upload(b, be, m), alloc(b, be, backend.F32, cp*dim), alloc(b, be, backend.F32, dim)
	n := countBuf(b, be, live, cp)
	bytes := int64(live) * dim * (4 + 1 + 4) // dy, mask (with the ReLU's gate), dx
	measure(b, be, bytes, func() { be.BiasActDropoutBackward(dy, nil, n, dim, true, 0.5, mask, dx, db) })
}

// BenchmarkAdamModel: the update of products-sim's SAGE model (3 layers,
// hidden 256, 100 features, 47 classes): nine Adam calls.
func BenchmarkAdamModel(b *testing.B) {
	be := openTest(b, Options{})
	r := rand.New(rand.NewPCG(75, 76))
	var params [][4]backend.Buffer
	for _, sz := range []int{100 * 256, 100 * 256, 256, 256 * 256, 256 * 256, 256, 256 * 47, 256 * 47, 47} {
		var p [4]backend.Buffer
		for k := range p {
			p[k] = upload(b, be, randF32(r, sz))
		}
		be.Fill(p[3], 0.01)
		params = append(params, p)
	}
	t := countBuf(b, be, 5, 1)
	cfg := backend.AdamConfig{LR: 0.003, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	measure(b, be, 0, func() {
		for _, p := range params {
			be.Adam(p[0], p[1], p[2], p[3], t, cfg)
		}
	})
}

// BenchmarkAggregateStep: the aggregations of a products-sim step at the
// live sizes of docs/perf.md (random sources): forward at the bottom
// (100 wide) and middle (256 wide), and the middle's backward after the
// zeroing of its input gradient.
func BenchmarkAggregateStep(b *testing.B) {
	for _, c := range []struct {
		nDst, nSrc, fanout, dim int
		bwd                     bool
	}{{49600, 126900, 5, 100, false}, {8000, 49600, 9, 256, false}, {8000, 49600, 9, 256, true}} {
		dir := "fwd"
		if c.bwd {
			dir = "zero+bwd"
		}
		b.Run(fmt.Sprintf("%s/dst=%d/dim=%d", dir, c.nDst, c.dim), func(b *testing.B) {
			be := openTest(b, Options{})
			blk := aggBlock(b, be, c.nDst, c.nSrc, c.fanout)
			ew := alloc(b, be, backend.F32, c.nDst*c.fanout)
			be.MeanWeights(blk, ew)
			r := rand.New(rand.NewPCG(77, 78))
			x := upload(b, be, randF32(r, c.nSrc*c.dim))
			out := upload(b, be, randF32(r, c.nDst*c.dim))
			if !c.bwd {
				measure(b, be, 0, func() { be.Aggregate(blk, ew, nil, x, c.dim, out) })
				return
			}
			measure(b, be, 0, func() {
				be.Fill(x, 0)
				be.AggregateBackward(blk, ew, nil, out, c.dim, x)
			})
		})
	}
}

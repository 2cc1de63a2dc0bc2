package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// pipeline runs one sampled forward and backward pass of a small SAGE-like
// layer with sizes large enough to split across threads, and returns every
// output as raw bits.
func pipeline(t *testing.T, b *Backend) map[string][]uint32 {
	r := rand.New(rand.NewPCG(7, 7))
	const nodes, feat, hidden, classes, seeds = 3000, 37, 70, 11, 700
	csr := randomGraph(r, nodes, 12)
	g, err := b.UploadGraph(csr)
	if err != nil {
		t.Fatal(err)
	}
	must := func(buf backend.Buffer, err error) backend.Buffer {
		if err != nil {
			t.Fatal(err)
		}
		return buf
	}
	alloc := func(dt backend.DType, n int) backend.Buffer { return must(b.Alloc(dt, n)) }
	count := func(v, c int) backend.Count { return backend.Count{Buf: must(b.Upload([]int32{int32(v)})), Cap: c} }
	randBuf := func(n int) backend.Buffer {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return must(b.Upload(s))
	}
	dst := make([]int32, seeds)
	for i := range dst {
		dst[i] = int32(r.IntN(nodes))
	}
	capE, capS := seeds*10, seeds*11
	blk := &backend.Block{
		NumDst: count(seeds, seeds), NumEdges: count(0, capE), NumSrc: count(0, capS),
		Indptr: alloc(backend.I32, seeds+1), Nbrs: alloc(backend.I32, capE),
		Indices: alloc(backend.I32, capE), SrcIDs: alloc(backend.I32, capS),
	}
	rnd := backend.Rand{Seed: 99, Stream: 0, Clock: must(b.Upload([]int32{1, 2}))}
	b.SampleLayer(g, must(b.Upload(dst)), blk.NumDst, 10, rnd, blk)
	b.Relabel(g, blk)

	features := randBuf(nodes * feat)
	x := alloc(backend.F32, capS*feat)
	b.Gather(features, feat, blk.SrcIDs, blk.NumSrc, x)
	ew := alloc(backend.F32, capE)
	b.MeanWeights(blk, ew)
	agg := alloc(backend.F32, seeds*feat)
	b.Aggregate(blk, ew, nil, x, feat, agg)
	w1 := randBuf(feat * hidden)
	h := alloc(backend.F32, seeds*hidden)
	b.Linear(agg, blk.NumDst, w1, feat, hidden, h, false)
	mask := alloc(backend.U8, seeds*hidden)
	bias := randBuf(hidden)
	drop := backend.Rand{Seed: 5, Stream: 128, Clock: rnd.Clock}
	b.BiasActDropout(h, blk.NumDst, hidden, bias, true, 0.5, drop, mask, h)
	w2 := randBuf(hidden * classes)
	logits := alloc(backend.F32, seeds*classes)
	b.Linear(h, blk.NumDst, w2, hidden, classes, logits, false)
	labels := make([]int32, seeds)
	for i := range labels {
		labels[i] = int32(r.IntN(classes))
	}
	loss, dlogits := alloc(backend.F32, 1), alloc(backend.F32, seeds*classes)
	b.SoftmaxCrossEntropy(logits, must(b.Upload(labels)), blk.NumDst, backend.Count{}, classes, loss, dlogits, count(0, 0))
	dw2, dh := alloc(backend.F32, hidden*classes), alloc(backend.F32, seeds*hidden)
	b.LinearBackwardWeight(h, dlogits, blk.NumDst, hidden, classes, dw2, false)
	b.LinearBackwardData(dlogits, blk.NumDst, w2, hidden, classes, dh, false)
	dbias := alloc(backend.F32, hidden)
	b.BiasActDropoutBackward(dh, h, blk.NumDst, hidden, true, 0.5, mask, dh, dbias)
	dagg, dw1 := alloc(backend.F32, seeds*feat), alloc(backend.F32, feat*hidden)
	b.LinearBackwardWeight(agg, dh, blk.NumDst, feat, hidden, dw1, false)
	b.LinearBackwardData(dh, blk.NumDst, w1, feat, hidden, dagg, false)
	dx := alloc(backend.F32, capS*feat)
	b.AggregateBackward(blk, ew, nil, dagg, feat, dx)
	gw, sw := alloc(backend.F32, capE), alloc(backend.F32, seeds)
	degs := make([]float32, capS)
	for i := range degs {
		degs[i] = float32(r.IntN(20))
	}
	b.GCNWeights(blk, must(b.Upload(degs)), gw, sw)
	gx, dgx := alloc(backend.F32, seeds*feat), alloc(backend.F32, capS*feat)
	b.Aggregate(blk, gw, sw, x, feat, gx)
	b.AggregateBackward(blk, gw, sw, dagg, feat, dgx)
	m, v := alloc(backend.F32, feat*hidden), alloc(backend.F32, feat*hidden)
	b.Adam(w1, dw1, m, v, count(1, 0), backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	big := alloc(backend.F32, 500*300)
	b.LinearBackwardWeight(randBuf(seeds*500), randBuf(seeds*300), count(seeds, seeds), 500, 300, big, false)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint32{}
	for name, buf := range map[string]backend.Buffer{
		"nbrs": blk.Nbrs, "indices": blk.Indices, "srcIDs": blk.SrcIDs, "x": x, "agg": agg, "h": h,
		"logits": logits, "loss": loss, "dlogits": dlogits, "dw2": dw2, "dh": dh, "dbias": dbias,
		"dw1": dw1, "dagg": dagg, "dx": dx, "gw": gw, "sw": sw, "gx": gx, "dgx": dgx, "w1": w1, "m": m, "v": v, "big": big,
	} {
		out[name] = bitsOf(buf)
	}
	for name, bits := range attentionPipeline(t, b, blk, rnd.Clock, randBuf) {
		out[name] = bits
	}
	return out
}

// attentionPipeline runs the graph attention ops forward and backward on
// blk (3 heads of 8 columns, attention dropout keyed by the sources' ids)
// and returns their outputs as raw bits.
func attentionPipeline(t *testing.T, b *Backend, blk *backend.Block, clock backend.Buffer, randBuf func(int) backend.Buffer) map[string][]uint32 {
	const heads, dim = 3, 8
	dstCap, edgeCap, srcCap := blk.NumDst.Cap, blk.NumEdges.Cap, blk.NumSrc.Cap
	alloc := func(n int) backend.Buffer {
		buf, err := b.Alloc(backend.F32, n)
		if err != nil {
			t.Fatal(err)
		}
		return buf
	}
	z, aSrc, aDst := randBuf(srcCap*heads*dim), randBuf(heads*dim), randBuf(heads*dim)
	el, er := alloc(srcCap*heads), alloc(dstCap*heads)
	b.HeadDot(z, blk.NumSrc, heads, dim, aSrc, el)
	b.HeadDot(z, blk.NumDst, heads, dim, aDst, er)
	r := backend.Rand{Seed: 3, Stream: 160, Clock: clock, Keys: blk.SrcIDs}
	coef := alloc((dstCap + edgeCap) * heads)
	b.EdgeSoftmax(blk, el, er, heads, 0.2, 0.3, r, coef)
	cat, mean := alloc(dstCap*heads*dim), alloc(dstCap*dim)
	b.HeadAggregate(blk, coef, z, heads, dim, false, cat, false)
	b.HeadAggregate(blk, coef, z, heads, dim, true, mean, false)
	dcoef, dz := alloc((dstCap+edgeCap)*heads), alloc(srcCap*heads*dim)
	b.HeadAggregateBackward(blk, coef, z, randBuf(dstCap*heads*dim), heads, dim, false, dcoef, dz)
	b.HeadAggregateBackward(blk, coef, z, randBuf(dstCap*dim), heads, dim, true, dcoef, dz)
	del, der := alloc(srcCap*heads), alloc(dstCap*heads)
	b.EdgeSoftmaxBackward(blk, el, er, heads, 0.2, 0.3, r, dcoef, del, der)
	da := alloc(heads * dim)
	none := alloc(heads * dim)
	zero, err := b.Upload([]int32{0})
	if err != nil {
		t.Fatal(err)
	}
	noRows := backend.Count{Buf: zero, Cap: srcCap}
	b.HeadDotBackward(z, del, del, blk.NumSrc, noRows, heads, dim, aSrc, aSrc, dz, true, da, none)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint32{}
	for name, buf := range map[string]backend.Buffer{
		"el": el, "er": er, "coef": coef, "cat": cat, "mean": mean, "dcoef": dcoef, "dz": dz, "del": del, "der": der, "da": da,
	} {
		out["attention "+name] = bitsOf(buf)
	}
	return out
}

func bitsOf(buf backend.Buffer) []uint32 {
	x := buf.(*buffer)
	var s []uint32
	switch x.dt {
	case backend.F32:
		for _, v := range x.f32 {
			s = append(s, math.Float32bits(v))
		}
	case backend.I32:
		for _, v := range x.i32 {
			s = append(s, uint32(v))
		}
	}
	return s
}

// randomGraph draws a graph on n vertices with up to maxDeg neighbours each.
func randomGraph(r *rand.Rand, n, maxDeg int) *graph.CSR {
	indptr := make([]int64, n+1)
	var indices []int32
	for v := range n {
		for range r.IntN(maxDeg + 1) {
			indices = append(indices, int32(r.IntN(n)))
		}
		indptr[v+1] = int64(len(indices))
	}
	return &graph.CSR{NumNodes: int64(n), Indptr: indptr, Indices: indices}
}

// TestThreadCountDeterminism requires bitwise-identical outputs for 1, 2
// and 3 threads.
func TestThreadCountDeterminism(t *testing.T) {
	ref := pipeline(t, New(1))
	for _, threads := range []int{2, 3} {
		b := New(threads)
		got := pipeline(t, b)
		b.Close()
		for name, want := range ref {
			g := got[name]
			if len(g) != len(want) {
				t.Errorf("%d threads: %s has %d elements, want %d", threads, name, len(g), len(want))
				continue
			}
			for i := range want {
				if g[i] != want[i] {
					t.Errorf("%d threads: %s[%d] bits %08x, 1 thread %08x", threads, name, i, g[i], want[i])
					break
				}
			}
		}
	}
}

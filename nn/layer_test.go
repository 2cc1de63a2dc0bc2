package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// download reads a block's live arrays back into a hostBlock.
func download(be backend.Backend, blk *backend.Block) hostBlock {
	c := make([]int32, 1)
	count := func(k backend.Count) int {
		be.Read(c, k.Buf, k.Off)
		return int(c[0])
	}
	nDst, nEdges, nSrc := count(blk.NumDst), count(blk.NumEdges), count(blk.NumSrc)
	hb := hostBlock{
		indptr:  make([]int32, nDst+1),
		indices: make([]int32, nEdges),
		srcIDs:  make([]int32, nSrc),
		nDst:    nDst,
		caps:    Caps{Dst: blk.NumDst.Cap, Edges: blk.NumEdges.Cap, Src: blk.NumSrc.Cap},
	}
	be.Read(hb.indptr, blk.Indptr, 0)
	if nEdges > 0 {
		be.Read(hb.indices, blk.Indices, 0)
	}
	be.Read(hb.srcIDs, blk.SrcIDs, 0)
	return hb
}

// refSAGE is h = x_dst·Ws + mean(x_nbrs)·Wn in float64 over live rows.
func refSAGE(hb hostBlock, x, ws, wn []float32, in, out int) []float64 {
	h := make([]float64, hb.nDst*out)
	for i := 0; i < hb.nDst; i++ {
		agg := make([]float64, in)
		lo, hi := hb.indptr[i], hb.indptr[i+1]
		for e := lo; e < hi; e++ {
			j := int(hb.indices[e])
			for k := range agg {
				agg[k] += float64(x[j*in+k]) / float64(hi-lo)
			}
		}
		for o := 0; o < out; o++ {
			s := 0.0
			for k := 0; k < in; k++ {
				s += float64(x[i*in+k])*float64(ws[k*out+o]) + agg[k]*float64(wn[k*out+o])
			}
			h[i*out+o] = s
		}
	}
	return h
}

// refGCN is h = Â·x·W in float64 with Â as documented by GCNWeights.
func refGCN(hb hostBlock, x, w, deg []float32, in, out int) []float64 {
	d := func(j int) float64 { return float64(deg[hb.srcIDs[j]]) }
	h := make([]float64, hb.nDst*out)
	for i := 0; i < hb.nDst; i++ {
		agg := make([]float64, in)
		for k := range agg {
			agg[k] = float64(x[i*in+k]) / (d(i) + 1)
		}
		lo, hi := hb.indptr[i], hb.indptr[i+1]
		for e := lo; e < hi; e++ {
			j := int(hb.indices[e])
			c := d(i) / float64(hi-lo) / math.Sqrt((d(i)+1)*(d(j)+1))
			for k := range agg {
				agg[k] += c * float64(x[j*in+k])
			}
		}
		for o := 0; o < out; o++ {
			for k := 0; k < in; k++ {
				h[i*out+o] += agg[k] * float64(w[k*out+o])
			}
		}
	}
	return h
}

// layerCase runs the gradient check of one layer on one block: the
// objective is Σ h[live]·R; it checks every live input element and every
// weight element, and the forward output against ref.
func layerCase(t *testing.T, be backend.Backend, ly layer, blk *backend.Block, deg backend.Buffer, in, out int, ps pass, ref func(hb hostBlock, x []float32) []float64) {
	t.Helper()
	hb := download(be, blk)
	c := hb.caps
	if err := ly.reserve(c); err != nil {
		t.Fatal(err)
	}
	defer ly.release()
	r := rand.New(rand.NewPCG(1, 2))
	xHost := randMatrix(r, c.Src, hb.nSrc(), in)
	x := upload(t, be, xHost)
	R := randMatrix(r, c.Dst, hb.nDst, out)
	h := alloc(t, be, backend.F32, c.Dst*out)
	f := func() float64 {
		ly.prepare(blk, deg)
		ly.forward(blk, x, h, ps)
		return dot(readF32(be, h), R, hb.nDst*out)
	}
	f()
	got := readF32(be, h)
	for i, want := range ref(hb, xHost) {
		if math.Abs(float64(got[i])-want) > 1e-5*(1+math.Abs(want)) {
			t.Fatalf("forward h[%d] = %v, want %v", i, got[i], want)
		}
	}
	dh := upload(t, be, R)
	dx := upload(t, be, randMatrix(r, c.Src, 0, in)) // all NaN: backward must overwrite live rows
	ly.backward(blk, x, dh, dx)
	syncOK(t, be)
	checkGrad(t, be, "dx", x, liveIdx(hb.nSrc()*in), readF32(be, dx), f)
	for _, p := range ly.params() {
		if len(p.Shape) == 2 {
			checkGrad(t, be, p.Name, p.W, liveIdx(p.Size()), readF32(be, p.G), f)
		}
	}
	syncOK(t, be)
}

// testBlocks returns the hand-drawn golden block and two sampled blocks
// (fanout 2 with repeated sources, all neighbours) with the degree table.
func testBlocks(t *testing.T, be backend.Backend) (map[string]*backend.Block, backend.Buffer) {
	g := sampleGraph()
	deg := degrees(g)
	blocks := map[string]*backend.Block{"golden": goldenBlock().upload(t, be)}
	b2, _ := sampledBatch(t, be, g, []int32{0, 13, 2, 10, 6}, []int{2}, 7)
	blocks["fanout2"] = b2[0]
	ball, _ := sampledBatch(t, be, g, []int32{5, 3, 13, 12}, []int{-1}, 7)
	blocks["all"] = ball[0]
	return blocks, upload(t, be, deg)
}

func TestSAGELayerGrad(t *testing.T) {
	be := newCPU(t)
	blocks, deg := testBlocks(t, be)
	const in, out = 5, 3
	for name, blk := range blocks {
		t.Run(name, func(t *testing.T) {
			ly, err := newSAGE(be, ownParams(be), 1, in, out, 11, false) // above the bottom: it has an input gradient
			if err != nil {
				t.Fatal(err)
			}
			defer freeParams(be, ly)
			layerCase(t, be, ly, blk, deg, in, out, pass{}, func(hb hostBlock, x []float32) []float64 {
				return refSAGE(hb, x, readF32(be, ly.wSelf.W), readF32(be, ly.wNeigh.W), in, out)
			})
		})
	}
}

func TestGCNLayerGrad(t *testing.T) {
	be := newCPU(t)
	blocks, deg := testBlocks(t, be)
	degHost := readF32(be, deg)
	for _, dims := range [][2]int{{5, 3}, {3, 5}} {
		in, out := dims[0], dims[1]
		for _, order := range []gcnOrder{gcnAggFirst, gcnMatmulFirst} {
			for name, blk := range blocks {
				t.Run(fmt.Sprintf("%dx%d/order%d/%s", in, out, order, name), func(t *testing.T) {
					ly, err := newGCN(be, ownParams(be), 0, in, out, 11)
					if err != nil {
						t.Fatal(err)
					}
					defer freeParams(be, ly)
					ly.force = order
					layerCase(t, be, ly, blk, deg, in, out, pass{}, func(hb hostBlock, x []float32) []float64 {
						return refGCN(hb, x, readF32(be, ly.w.W), degHost, in, out)
					})
				})
			}
		}
	}
}

func freeParams(be backend.Backend, ly layer) {
	for _, p := range ly.params() {
		p.free(be)
	}
}

func TestGCNOrderChoice(t *testing.T) {
	g := &gcnLayer{in: 100, out: 16}
	// Sampled: Src well above Dst, so aggregate first wins even with in > out.
	if got := g.chooseOrder(Caps{Dst: 1024, Edges: 10240, Src: 11264}); got != gcnAggFirst {
		t.Errorf("sampled envelope: order %d, want aggregate first", got)
	}
	// Heavy reuse (Src close to Dst, many edges) with in > out: matmul first.
	if got := g.chooseOrder(Caps{Dst: 1000, Edges: 100000, Src: 1100}); got != gcnMatmulFirst {
		t.Errorf("dense envelope: order %d, want matmul first", got)
	}
	g.force = gcnAggFirst
	if got := g.chooseOrder(Caps{Dst: 1000, Edges: 100000, Src: 1100}); got != gcnAggFirst {
		t.Errorf("forced: order %d, want aggregate first", got)
	}
}

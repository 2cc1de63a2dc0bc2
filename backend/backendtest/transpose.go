package backendtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
)

// transposeCase draws a block whose edges include sources outside the live
// ones (-1 and nSrc, both left out of a transpose) and uploads it with its
// transpose.
func (e *env) transposeCase(nDst, nSrc int) (h hostBlock, blk *backend.Block, t backend.Transposed) {
	h = e.randomBlock(nDst, nSrc)
	for k := 0; k < h.nEdges; k += 11 {
		h.indices[k] = -1
	}
	for k := 5; k < h.nEdges; k += 13 {
		h.indices[k] = int32(nSrc)
	}
	blk = e.uploadBlock(h)
	t = backend.Transposed{SrcPtr: e.poisonI32(h.capSrc + 1), Perm: e.poisonI32(h.capEdges), EdgeDst: e.poisonI32(h.capEdges)}
	e.be.TransposeBlock(blk, t)
	return h, blk, t
}

// bySource lists h's live edges with a live source, grouped by source in
// edge order, and each edge's destination.
func bySource(h hostBlock) (edges [][]int32, dst []int32) {
	edges, dst = make([][]int32, h.nSrc), make([]int32, h.nEdges)
	for i := range h.nDst {
		for k := h.indptr[i]; k < h.indptr[i+1]; k++ {
			if j := h.indices[k]; j >= 0 && int(j) < h.nSrc {
				edges[j] = append(edges[j], k)
				dst[k] = int32(i)
			}
		}
	}
	return edges, dst
}

// testTransposeBlock: each live source lists exactly its edges (in any
// order: a GPU may fill them with atomics), with their destinations.
func testTransposeBlock(e *env) {
	for _, sz := range [][2]int{{40, 90}, {1, 1}, {300, 700}} {
		name := fmt.Sprintf("TransposeBlock %dx%d", sz[0], sz[1])
		h, _, t := e.transposeCase(sz[0], sz[1])
		edges, dst := bySource(h)
		sp := e.readI32(t.SrcPtr, h.nSrc+1)
		perm, ed := e.readI32(t.Perm, h.capEdges), e.readI32(t.EdgeDst, h.capEdges)
		if sp[0] != 0 {
			e.t.Errorf("%s: SrcPtr[0] = %d, want 0", name, sp[0])
			continue
		}
		bad := 0
		for j := range h.nSrc {
			lo, hi := int(sp[j]), int(sp[j+1])
			if lo > hi || hi > h.nEdges {
				e.t.Errorf("%s: source %d: offsets %d..%d", name, j, lo, hi)
				break
			}
			got := slices.Clone(perm[lo:hi])
			slices.Sort(got)
			if !slices.Equal(got, edges[j]) {
				if bad++; bad <= maxReports {
					e.t.Errorf("%s: source %d lists edges %v, want %v", name, j, got, edges[j])
				}
				continue
			}
			for _, k := range got {
				if ed[k] != dst[k] {
					if bad++; bad <= maxReports {
						e.t.Errorf("%s: EdgeDst[%d] = %d, want %d", name, k, ed[k], dst[k])
					}
				}
			}
		}
	}
}

// catBwdCase is one AggregateConcatBackward configuration.
type catBwdCase struct {
	dim  int
	relu bool
	p    float32
}

// testAggregateConcatBackward: the gathered gradient through each kind of
// activation, against a float64 reference; a bfloat16 dx is the float32
// one rounded and gives the same bias gradient; rows past the live
// sources are left alone.
func testAggregateConcatBackward(e *env) {
	cases := []catBwdCase{{1, true, 0}, {16, true, 0.5}, {33, true, 0.25}, {100, true, 0}, {100, false, 0}, {64, true, 0.5}, {256, true, 0.5}}
	for _, c := range cases {
		name := fmt.Sprintf("AggregateConcatBackward %+v", c)
		h, blk, t := e.transposeCase(45, 100)
		ew := e.randF32(h.capEdges, 1)
		dcat := e.randF32(h.capDst*2*c.dim, 1)
		y := e.randF32(h.capSrc*c.dim, 1)
		mask := make([]uint8, h.capSrc*c.dim)
		for i := range mask {
			mask[i] = uint8(e.rnd.IntN(2))
		}
		act := backend.ActGrad{Relu: c.relu, P: c.p, DBias: e.poison(c.dim)}
		if c.p > 0 {
			act.Mask = e.upload(mask)
		} else {
			act.Y = e.upload(y)
		}
		dx := e.poison(h.capSrc * c.dim)
		e.be.AggregateConcatBackward(blk, t, e.upload(ew), e.upload(dcat), c.dim, act, dx)
		want, scale := catBwdRef(h, c, ew, dcat, y, mask)
		sum, mag := make([]float64, c.dim), make([]float64, c.dim)
		for i, g := range want {
			sum[i%c.dim] += g
			mag[i%c.dim] += scale[i]
		}
		got := e.readF32(dx, h.capSrc*c.dim)
		e.checkClose(name+" dx", got, want, scale, tolSum, c.dim)
		for k, v := range got[h.nSrc*c.dim:] {
			if !math.IsNaN(float64(v)) {
				e.t.Errorf("%s: element %d past the live sources was written (%g)", name, h.nSrc*c.dim+k, v)
				break
			}
		}
		dbias := e.readF32(act.DBias, c.dim)
		e.checkClose(name+" dbias", dbias, sum, mag, tolSum, 0)

		// The same call into a bfloat16 dx: the float32 values rounded, and
		// the bias gradient summed before rounding (t fixes the order).
		act.DBias = e.poison(c.dim)
		dx16 := e.alloc(backend.BF16, h.capSrc*c.dim, 0)
		e.be.AggregateConcatBackward(blk, t, e.upload(ew), e.upload(dcat), c.dim, act, dx16)
		checkEqual(e.t, name+" bfloat16 dx", e.readU16(dx16, h.nSrc*c.dim), backend.ToBF16(got[:h.nSrc*c.dim]), c.dim)
		checkEqual(e.t, name+" bias gradient beside a bfloat16 dx", e.readF32(act.DBias, c.dim), dbias, 0)
	}
}

// catBwdRef is AggregateConcatBackward in float64: the gradient of each
// live source through the activation, and the magnitudes of its terms.
func catBwdRef(h hostBlock, c catBwdCase, ew, dcat, y []float32, mask []uint8) (want, scale []float64) {
	d := c.dim
	want, scale = make([]float64, h.nSrc*d), make([]float64, h.nSrc*d)
	edges, dst := bySource(h)
	for j := range h.nSrc {
		for col := range d {
			var g, s float64
			for _, k := range edges[j] {
				t := float64(ew[k]) * float64(dcat[int(dst[k])*2*d+d+col])
				g, s = g+t, s+math.Abs(t)
			}
			if j < h.nDst {
				t := float64(dcat[j*2*d+col])
				g, s = g+t, s+math.Abs(t)
			}
			i := j*d + col
			switch {
			case c.p > 0:
				g, s = g*float64(mask[i])/(1-float64(c.p)), s*float64(mask[i])/(1-float64(c.p))
			case c.relu && !(y[i] > 0):
				g, s = 0, 0
			}
			want[i], scale[i] = g, s
		}
	}
	return want, scale
}

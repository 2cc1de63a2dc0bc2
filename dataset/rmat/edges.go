package rmat

import "github.com/fanout-gnn/fanout/internal/parallel"

// edgeChunk is the number of pairs drawn from one seeded generator; the
// chunk index keys the generator, so any thread may draw any chunk.
const edgeChunk = 1 << 16

// thresholds are the cumulative R-MAT quadrant probabilities in units of
// 2^-16: a draw r (16 bits) picks quadrant (0,0) if r < a, (0,1) if r < ab,
// (1,0) if r < abc, else (1,1).
type thresholds struct{ a, ab, abc uint32 }

func newThresholds(p Preset) thresholds {
	q := func(x float64) uint32 { return uint32(x*65536 + 0.5) }
	return thresholds{a: q(p.A), ab: q(p.A + p.B), abc: q(p.A + p.B + p.C)}
}

// rmatEdges draws p.Pairs R-MAT pairs and maps both endpoints through perm.
// It returns src, dst: [p.Pairs] int32 vertex ids.
func rmatEdges(p Preset, perm *idPermutation, seed uint64, threads int, prog *parallel.Progress) (src, dst []int32) {
	src = make([]int32, p.Pairs)
	dst = make([]int32, p.Pairs)
	th := newThresholds(p)
	chunks := (p.Pairs + edgeChunk - 1) / edgeChunk
	prog.Start("edges", p.Pairs)
	parallel.Blocks(chunks, threads, func(k int64) {
		lo, hi := k*edgeChunk, min((k+1)*edgeChunk, p.Pairs)
		rng := newPCG(seed, streamEdges, uint64(k))
		for i := lo; i < hi; i++ {
			var u, v uint32
			var r uint64
			for l := range p.Scale {
				if l%4 == 0 {
					r = rng.Uint64()
				}
				x := uint32(r & 0xffff)
				r >>= 16
				// u bit: quadrant c or d; v bit: quadrant b or d.
				u = u<<1 | b2u(x >= th.ab)
				v = v<<1 | (b2u(x >= th.a) ^ b2u(x >= th.ab) ^ b2u(x >= th.abc))
			}
			src[i], dst[i] = int32(perm.apply(u)), int32(perm.apply(v))
		}
		prog.Add(hi - lo)
	})
	return src, dst
}

// b2u is 1 for true, 0 for false (compiled without a branch).
func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

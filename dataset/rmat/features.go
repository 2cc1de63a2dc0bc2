package rmat

import (
	"math"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// featureBlock is the number of vertices per work unit of makeFeatures.
const featureBlock = 4096

// centroids returns [classes, dim] float32 type centroids, row-major, with
// independent random signs per entry of magnitude signal/sqrt(2·signalDim),
// so that two centroids lie signal·sqrt(dim/signalDim) apart in expectation
// (in units of the noise deviation): `signal` apart at width signalDim, and
// with the same signal in every entry at any width.
func centroids(classes, dim, signalDim int, signal float64, seed uint64) []float32 {
	out := make([]float32, classes*dim)
	scale := float32(signal / math.Sqrt(2*float64(signalDim)))
	rng := newPCG(seed, streamCentroids, 0)
	var r uint64
	for i := range out {
		if i%64 == 0 {
			r = rng.Uint64()
		}
		out[i] = scale
		if r&1 == 1 {
			out[i] = -scale
		}
		r >>= 1
	}
	return out
}

// makeFeatures returns [n, p.FeatDim] float32 features, row-major: the
// centroid of the vertex's type (centroids, with p's Signal at its
// signalDim) plus noise of unit variance per entry. The noise is a sum of
// four uniforms (close to Gaussian), drawn from a generator keyed by the
// vertex id. types is [n] in [0, p.Classes).
func makeFeatures(p Preset, types []int32, seed uint64, threads int, prog *parallel.Progress) []float32 {
	n := int64(len(types))
	classes, dim := p.Classes, p.FeatDim
	cent := centroids(classes, dim, p.signalDim(), p.Signal, seed)
	feat := make([]float32, n*int64(dim))
	// Each 16-bit uniform has variance (2^32-1)/12 in units of 1; four of them
	// summed and centered have variance (2^32-1)/3.
	const center = 2 * 65535.0
	norm := float32(1 / math.Sqrt((65536.0*65536.0-1)/3))
	blocks := (n + featureBlock - 1) / featureBlock
	prog.Start("features", n)
	parallel.Blocks(blocks, threads, func(k int64) {
		lo, hi := k*featureBlock, min((k+1)*featureBlock, n)
		for v := lo; v < hi; v++ {
			rng := newPCG(seed, streamFeatures, uint64(v))
			row := feat[v*int64(dim) : (v+1)*int64(dim)]
			c := int(types[v])
			for j, x := range cent[c*dim : (c+1)*dim] {
				r := rng.Uint64()
				s := r&0xffff + r>>16&0xffff + r>>32&0xffff + r>>48
				// The conversion rounds the product, so no platform may fuse
				// it with the addition: features are bit-identical everywhere.
				row[j] = float32((float32(s)-center)*norm) + x
			}
		}
		prog.Add(hi - lo)
	})
	return feat
}

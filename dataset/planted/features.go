package planted

import (
	"math"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// featureBlock is the number of vertices a work unit of features handles.
const featureBlock = 2048

// entryScale is the magnitude of a centroid's entries that puts two
// centroids signal apart (in expectation, in units of the noise) at the
// width dim: signal/sqrt(2·dim).
func entryScale(signal float64, dim int) float32 {
	return float32(signal / math.Sqrt(2*float64(dim)))
}

// features is a type's [n, dim] float32 table, row-major: the centroid of
// the vertex's community (each entry ±scale, random signs per community:
// entryScale) plus noise of unit variance per entry (a sum of four 16-bit
// uniforms, centred and scaled: close to Gaussian, and the same bits on
// every machine). typ is the type's index, for the keys.
func features(comm []int32, classes, dim, typ int, scale float32, seed uint64, threads int, prog *parallel.Progress) []float32 {
	n := int64(len(comm))
	cent := make([]float32, classes*dim)
	ck := key(seed, streamCentroids, typ)
	for i := range cent {
		cent[i] = scale
		if ck.Word(uint32(i/dim), uint32(i%dim))&1 == 1 {
			cent[i] = -scale
		}
	}
	feat := make([]float32, n*int64(dim))
	// Four 16-bit uniforms summed and centred have variance (2^32-1)/3.
	const center = 2 * 65535.0
	norm := float32(1 / math.Sqrt((65536.0*65536.0-1)/3))
	nk := key(seed, streamFeatures, typ)
	prog.Start("features", n)
	parallel.Blocks((n+featureBlock-1)/featureBlock, threads, func(b int64) {
		lo, hi := b*featureBlock, min((b+1)*featureBlock, n)
		for v := lo; v < hi; v++ {
			row := feat[v*int64(dim) : (v+1)*int64(dim)]
			c := int(comm[v])
			cv := cent[c*dim : (c+1)*dim]
			for j := 0; j < dim; j += 2 {
				w := nk.Words(uint32(v), uint32(j/2)) // two entries' 64 bits each
				for h := range min(2, dim-j) {
					r := uint64(w[2*h])<<32 | uint64(w[2*h+1])
					s := r&0xffff + r>>16&0xffff + r>>32&0xffff + r>>48
					// The conversion rounds the product, so no machine fuses
					// it with the addition.
					row[j+h] = float32((float32(s)-center)*norm) + cv[j+h]
				}
			}
		}
		prog.Add(hi - lo)
	})
	return feat
}

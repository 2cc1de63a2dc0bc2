package cuda

import (
	"fmt"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// BenchmarkBatchNorm is batch normalisation's column statistics and its
// training backward (with the bias gradient) at products-sim's GIN shapes:
// 50,000 and 8,000 live rows of 256 columns, and 180,000 rows (the bottom
// layer's destinations at fanouts 15, 10). Bytes: x read twice for the
// statistics; x and dy read twice and dx written, then dx read, for the
// backward.
func BenchmarkBatchNorm(b *testing.B) {
	const dim = 256
	for _, rows := range []int{8000, 50000, 180000} {
		for _, det := range []bool{false, true} {
			b.Run(fmt.Sprintf("rows=%d/deterministic=%t", rows, det), func(b *testing.B) {
				be := openTest(b, Options{Deterministic: det})
				n := countBuf(b, be, rows, rows)
				x, dy, dx := alloc(b, be, backend.F32, rows*dim), alloc(b, be, backend.F32, rows*dim), alloc(b, be, backend.F32, rows*dim)
				be.Fill(x, 0.5)
				be.Fill(dy, 0.25)
				stats, gamma := alloc(b, be, backend.F32, 2*dim), alloc(b, be, backend.F32, dim)
				be.Fill(gamma, 1)
				dg, db, dbias := alloc(b, be, backend.F32, dim), alloc(b, be, backend.F32, dim), alloc(b, be, backend.F32, dim)
				bytes := int64(rows) * dim * 4
				b.Run("stats", func(b *testing.B) {
					measure(b, be, 2*bytes, func() { be.BatchNormStats(x, n, dim, nil, nil, stats) })
				})
				b.Run("backward", func(b *testing.B) {
					measure(b, be, 6*bytes, func() {
						be.NormBackward(x, dy, n, dim, false, stats, gamma, 1e-5, backend.ActGrad{}, dx, dg, db, dbias)
					})
				})
			})
		}
	}
}

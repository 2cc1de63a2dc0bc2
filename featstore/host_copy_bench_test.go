package featstore

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/internal/parallel"
)

// BenchmarkHostRowCopy copies a step's rows outside the cache from a host
// tier into staging as DiskConfig.StageHost does (copyRowsOf, a share of
// the rows a goroutine): 35,000 random rows of 256 bytes (papers-sim's
// bfloat16 rows, a tenth cached) of a 4 GiB tier, on the pages the
// allocator gives and on 2 MiB pages where the kernel gives them
// (adviseHuge), by one goroutine and by every core. It reports rows a
// second. `scripts/measure host-copy` runs it on the GPU machine.
func BenchmarkHostRowCopy(b *testing.B) {
	const dim, n = 128, 35_000
	rows := (4 << 30) / (dim * 2)
	for _, huge := range []bool{false, true} {
		var tier any
		if huge {
			tier = newHostRows(backend.BF16, rows, dim)
		} else {
			tier = newRows(backend.BF16, rows, dim)
		}
		host := tier.([]uint16)
		for i := 0; i < len(host); i += 2048 { // every 4 KiB page written once
			host[i] = uint16(i)
		}
		stage := make([]uint16, n*dim)
		src := make([]int, n)
		rnd := rand.New(rand.NewPCG(3, 4))
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("huge=%t/workers=%d", huge, workers), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					for i := range src {
						src[i] = rnd.IntN(rows)
					}
					b.StartTimer()
					parallel.Range(n, workers, func(_ int, lo, hi int64) {
						copyRowsOf(stage, host, dim, int(hi-lo), func(j int) (int, int) { return int(lo) + j, src[int(lo)+j] })
					})
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
			})
		}
		tier, host = nil, nil
		runtime.GC()
	}
}

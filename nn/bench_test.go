package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// randomGraph is a directed graph of n vertices with 1..2·avg-1 random
// neighbours each.
func randomGraph(n, avg int, r *rand.Rand) *graph.CSR {
	g := &graph.CSR{NumNodes: int64(n), Indptr: []int64{0}}
	for v := 0; v < n; v++ {
		d := 1 + r.IntN(2*avg-1)
		for range d {
			g.Indices = append(g.Indices, int32(r.IntN(n)))
		}
		g.Indptr = append(g.Indptr, int64(len(g.Indices)))
	}
	return g
}

// BenchmarkStep times one training step (forward with dropout, loss,
// backward, Adam) of a 2-layer model shaped like the tiny preset: 256
// seeds, fanouts 10,5, 32 features, hidden 64, 8 classes.
func BenchmarkStep(b *testing.B) {
	for _, kind := range []string{KindSAGE, KindGCN} {
		b.Run(kind, func(b *testing.B) {
			be := newCPU(b)
			r := rand.New(rand.NewPCG(1, 1))
			g := randomGraph(16384, 12, r)
			seeds := make([]int32, 256)
			labels := make([]int32, len(seeds)+1)
			for i := range seeds {
				seeds[i] = int32(r.IntN(int(g.NumNodes)))
				labels[i] = int32(r.IntN(8))
			}
			blocks, caps := sampledBatch(b, be, g, seeds, []int{10, 5}, 1)
			cfg := Config{Kind: kind, InDim: 32, Hidden: 64, Classes: 8, Layers: 2, Dropout: 0.5}
			batch := &Batch{
				Blocks: blocks,
				X:      upload(b, be, randMatrix(r, caps[0].Src, caps[0].Src, cfg.InDim)),
				Labels: upload(b, be, labels),
				Degree: upload(b, be, degrees(g)),
			}
			m := newTestModel(b, be, cfg, caps)
			rnd := backend.Rand{Seed: 1, Clock: upload(b, be, []int32{0, 0})}
			tc := backend.Count{Buf: upload(b, be, []int32{0}), Cap: 1}
			adam := backend.AdamConfig{LR: 0.003, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
			b.ResetTimer()
			for b.Loop() {
				m.Loss(batch, m.Forward(batch, true, rnd))
				m.Backward(batch)
				be.AddCount(tc, 1, nil)
				m.Update(tc, adam)
			}
			b.StopTimer()
			if err := m.Err(); err != nil {
				b.Fatal(err)
			}
			syncOK(b, be)
			hb := download(be, blocks[0])
			b.Logf("bottom block: %d dst, %d edges, %d src", hb.nDst, hb.nEdges(), hb.nSrc())
		})
	}
}

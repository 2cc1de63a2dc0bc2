package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/graph"
)

// spaceRound is one space of TestRelabelSpaceGenerationWrap: destinations,
// two blocks' neighbours, and a block that Relabel relabels after them.
type spaceRound struct {
	dst, relDst []int32
	nbrs        [2][]int32
}

// run relabels the round on b over graph g: RelabelStart, two RelabelAdd
// calls, then Relabel of another block. It returns the space's count,
// source ids and local ids, then Relabel's.
func (r spaceRound) run(t *testing.T, b backend.Backend, g backend.Graph) (out [][]int32) {
	t.Helper()
	capSrc := len(r.dst) + len(r.nbrs[0]) + len(r.nbrs[1])
	srcIDs, nSrc := alloc(t, b, backend.I32, capSrc), countBuf(t, b, -1, capSrc)
	b.RelabelStart(g, upload(t, b, r.dst), countBuf(t, b, len(r.dst), len(r.dst)), srcIDs, nSrc)
	var blocks []*backend.Block
	for _, nbrs := range r.nbrs {
		blk := &backend.Block{NumEdges: countBuf(t, b, len(nbrs), len(nbrs)), Nbrs: upload(t, b, nbrs),
			Indices: alloc(t, b, backend.I32, len(nbrs))}
		b.RelabelAdd(g, blk, srcIDs, nSrc)
		blocks = append(blocks, blk)
	}
	n := readCount(t, b, nSrc)
	out = append(out, []int32{int32(n)}, readI32(t, b, srcIDs, n))
	for i, blk := range blocks {
		out = append(out, readI32(t, b, blk.Indices, len(r.nbrs[i])))
	}
	nbrs := r.nbrs[0]
	capSrc = len(r.relDst) + len(nbrs)
	src := make([]int32, capSrc)
	copy(src, r.relDst)
	blk := &backend.Block{
		NumDst:   countBuf(t, b, len(r.relDst), len(r.relDst)),
		NumEdges: countBuf(t, b, len(nbrs), len(nbrs)),
		NumSrc:   countBuf(t, b, -1, capSrc),
		Nbrs:     upload(t, b, nbrs),
		Indices:  alloc(t, b, backend.I32, len(nbrs)),
		SrcIDs:   upload(t, b, src),
	}
	b.Relabel(g, blk)
	n = readCount(t, b, blk.NumSrc)
	return append(out, []int32{int32(n)}, readI32(t, b, blk.SrcIDs, n), readI32(t, b, blk.Indices, len(nbrs)))
}

// TestRelabelSpaceGenerationWrap runs spaces (RelabelStart and RelabelAdd)
// and Relabel calls on one graph across the wrap of its generation
// counter, reached by a RelabelStart (which keeps its space's entries) or
// by a Relabel (which clears the table), and compares every result with
// the CPU backend's.
func TestRelabelSpaceGenerationWrap(t *testing.T) {
	for _, gen := range []int32{-5, -4} { // 2^32-5: RelabelStart wraps; 2^32-4: Relabel does
		t.Run(fmt.Sprintf("generation %d", uint32(gen)), func(t *testing.T) {
			gpu := openTest(t, Options{})
			host := cpu.New(1)
			defer host.Close()
			r := rand.New(rand.NewPCG(23, uint64(-gen)))
			const n = 3000
			csr := &graph.CSR{NumNodes: n, Indptr: make([]int64, n+1)}
			g, err := gpu.UploadGraph(csr)
			if err != nil {
				t.Fatal(err)
			}
			hg, err := host.UploadGraph(csr)
			if err != nil {
				t.Fatal(err)
			}
			gpu.Write(g.(*devGraph).relState, 0, []int32{gen, 0})
			ids := func(k int) []int32 {
				out := make([]int32, k)
				for i := range out {
					out[i] = int32(r.IntN(n / 3)) // repeats across rounds and blocks
				}
				return out
			}
			for round := range 5 {
				perm := r.Perm(n / 3)
				rd := spaceRound{dst: make([]int32, 100), relDst: make([]int32, 50), nbrs: [2][]int32{ids(400), ids(300)}}
				for i := range rd.dst {
					rd.dst[i] = int32(perm[i])
				}
				for i := range rd.relDst {
					rd.relDst[i] = int32(perm[200+i])
				}
				got, want := rd.run(t, gpu, g), rd.run(t, host, hg)
				for i := range want {
					equalI32(t, fmt.Sprintf("round %d result %d", round, i), got[i], want[i])
				}
			}
			if st := readI32(t, gpu, g.(*devGraph).relState, 2); st[0] < 0 || st[0] > 10 || st[1] != 0 {
				t.Errorf("relabel state %v after the wrap, want a small generation and a zero block counter", st)
			}
		})
	}
}

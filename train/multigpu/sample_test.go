package multigpu

import (
	"fmt"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// neighbourhoods samples seeds on a plan of batch len(seeds) and returns,
// per hop, every destination's sampled neighbours as "hop:vertex:nbrs".
func neighbourhoods(t *testing.T, be backend.Backend, in *train.Inputs, seeds []int32, fanouts []int, g *graph.CSR) map[string]bool {
	t.Helper()
	sc := sample.Envelope(g, len(seeds), fanouts)
	caps := make([]nn.Caps, len(sc))
	for i, c := range sc {
		caps[i] = nn.Caps(c)
	}
	p, err := train.NewPlan(be, len(seeds), fanouts, caps, 0, backend.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Free()
	p.SetBatch(seeds, 3, 7)
	p.Sample(in, 11)
	counts := make([]int32, p.Counts.Len())
	be.Read(counts, p.Counts, 0)
	out := map[string]bool{}
	for h := range fanouts {
		b := p.Blocks[len(fanouts)-1-h]
		nd, ne := counts[b.NumDst.Off], counts[b.NumEdges.Off]
		ptr := make([]int32, nd+1)
		nbrs := make([]int32, max(ne, 1))
		ids := make([]int32, max(nd, 1))
		be.Read(ptr, b.Indptr, 0)
		be.Read(nbrs, b.Nbrs, 0)
		be.Read(ids, b.SrcIDs, 0)
		for i := int32(0); i < nd; i++ {
			out[fmt.Sprintf("%d:%d:%v", h, ids[i], nbrs[ptr[i]:ptr[i+1]])] = true
		}
	}
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSharesSampleTheSameNeighbourhoods: the union of what N ranks sample
// for their shares of a batch is what one device samples for the whole
// batch, hop by hop: a vertex's neighbours depend on the seed, the clock,
// the hop and the vertex, not on the rank or the batch it lands in.
func TestSharesSampleTheSameNeighbourhoods(t *testing.T) {
	ds, cfg := tiny(t)
	be := cpu.New(1)
	in, err := train.Upload(be, ds)
	if err != nil {
		t.Fatal(err)
	}
	seeds := train.Shuffle(ds.Train, 1, 0)[:cfg.Batch]
	want := neighbourhoods(t, be, in, seeds, cfg.Fanouts, ds.Graph)
	for _, n := range []int{2, 4} {
		got := map[string]bool{}
		b := cfg.Batch / n
		for r := 0; r < n; r++ {
			for k := range neighbourhoods(t, be, in, seeds[r*b:(r+1)*b], cfg.Fanouts, ds.Graph) {
				got[k] = true
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d shares sampled %d (hop, vertex) neighbourhoods, one device %d", n, len(got), len(want))
		}
		for k := range got {
			if !want[k] {
				t.Fatalf("%d shares: %s not sampled by one device", n, k)
			}
		}
	}
}

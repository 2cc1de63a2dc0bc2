package hybrid

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// TestHostListsSample: on the CPU backend, sampling through the host
// topology draws what package sample draws from the CSR (checkHostLists).
func TestHostListsSample(t *testing.T) { checkHostLists(t, cpu.New(2)) }

// checkHostLists samples tiny's graph through be's host topology (every
// list in host memory, those of the highest-degree vertices that fit a
// third of the list bytes pointed at copies in backend memory) for
// several fanouts, and requires package sample's draws from the CSR and,
// per destination and fanout, one list read under its tier.
func checkHostLists(t *testing.T, be backend.Backend) {
	ds, _ := tiny(t)
	csr := ds.Graph
	topo, err := newHostTopology(be, csr)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.free()
	lists, _, err := topo.place(4 * csr.NumEdges() / 3)
	if err != nil {
		t.Fatal(err)
	}
	onGPU := graph.Replicated(csr, 4*csr.NumEdges()/3)
	if lists != int64(len(onGPU)) || lists < 100 || lists == csr.NumNodes {
		t.Fatalf("%d lists placed, graph.Replicated has %d", lists, len(onGPU))
	}
	// Destinations: the 100 highest degrees and 400 others, some
	// repeated; a read is local where the list is in backend memory.
	order := graph.DegreeOrder(csr)
	dst := slices.Clone(order[:100])
	for i := range 400 {
		dst = append(dst, order[(i*7919)%len(order)])
	}
	var local int64
	for _, v := range dst {
		if slices.Contains(onGPU, v) {
			local++
		}
	}
	var want backend.ReadCounts
	n := len(dst)
	for _, fanout := range []int{-1, 3, 15, 40} {
		key := rng.Key{Seed: 0xabc + uint64(fanout), Epoch: 2, Step: 17, Stream: 1}
		indptr := make([]int32, n+1)
		total := sample.Layer(csr, dst, fanout, key, indptr, nil, 1)
		nbrs := make([]int32, total)
		sample.Layer(csr, dst, fanout, key, indptr, nbrs, 1)
		blk := &backend.Block{NumDst: count(t, be, n, n), NumEdges: count(t, be, 0, total), NumSrc: count(t, be, 0, n),
			Indptr: alloc(t, be, n+1), Nbrs: alloc(t, be, total), SrcIDs: alloc(t, be, n)}
		r := backend.Rand{Seed: key.Seed, Stream: key.Stream, Clock: upload(t, be, []int32{int32(key.Epoch), int32(key.Step)})}
		be.SampleLayer(topo.graph, upload(t, be, dst), blk.NumDst, fanout, r, blk)
		gotIndptr, gotNbrs := make([]int32, n+1), make([]int32, total)
		be.Read(gotIndptr, blk.Indptr, 0)
		be.Read(gotNbrs, blk.Nbrs, 0)
		if err := be.Sync(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gotIndptr, indptr) || !slices.Equal(gotNbrs, nbrs) {
			t.Fatalf("fanout %d: the host topology's samples differ from the CSR's", fanout)
		}
		want.Local += local
		want.Host += int64(n) - local
	}
	got, err := topo.reads()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("list reads %+v, want %+v", got, want)
	}
}

func upload(t *testing.T, be backend.Backend, data []int32) backend.Buffer {
	t.Helper()
	b, err := be.Upload(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func alloc(t *testing.T, be backend.Backend, n int) backend.Buffer {
	t.Helper()
	b, err := be.Alloc(backend.I32, max(n, 1))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// count is a count of capacity c whose live value starts at v.
func count(t *testing.T, be backend.Backend, v, c int) backend.Count {
	t.Helper()
	return backend.Count{Buf: upload(t, be, []int32{int32(v)}), Cap: c}
}

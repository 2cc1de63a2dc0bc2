package hybrid

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/train"
)

// TestPlanTopology: the whole graph stays on the GPU exactly while it fits
// the budget with the per-vertex tables, the margin and the step's
// estimate; TopologyGPU and TopologyHost override that, no budget
// keeps the whole graph under auto, and a budget below the pointer table,
// the per-vertex tables and the margin is refused naming --gpu-memory.
func TestPlanTopology(t *testing.T) {
	const n, e, margin, step = 1000, 50_000, 4096, 70_000
	whole := 8*(n+1) + 4*e + 8*n // indptr, indices, Relabel's table: 216,008
	pointer := (8 + 4 + 1 + 8) * n
	tables := 12 * n
	edge := int64(whole + tables + margin + step) // the least budget that keeps the whole graph
	cases := []struct {
		mode   TopologyMode
		budget int64
		host   bool
	}{
		{TopologyAuto, edge, false}, {TopologyAuto, edge - 1, true}, {TopologyAuto, 0, false},
		{TopologyHost, 0, true}, {TopologyHost, 1 << 40, true}, {TopologyGPU, edge - 1, false},
	}
	for _, c := range cases {
		p, err := PlanTopology(c.mode, c.budget, margin, step, n, e)
		if err != nil {
			t.Fatalf("mode %d budget %d: %v", c.mode, c.budget, err)
		}
		bytes := int64(whole)
		if c.host {
			bytes = int64(pointer)
		}
		if p.Host != c.host || p.Bytes != bytes || p.Vertices != n || p.Edges != e || p.ListBytes() != 4*e {
			t.Errorf("mode %d budget %d: %+v, want host %t, %d bytes", c.mode, c.budget, p, c.host, bytes)
		}
		if !p.Host && (p.GPULists != n || p.GPUEdges != e) {
			t.Errorf("the whole graph: %d lists, %d edges on the GPU", p.GPULists, p.GPUEdges)
		}
	}
	least := int64(pointer + tables + margin)
	if _, err := PlanTopology(TopologyAuto, least, margin, step, n, e); err != nil {
		t.Errorf("a budget of exactly the pointer table, tables and margin: %v", err)
	}
	_, err := PlanTopology(TopologyAuto, least-1, margin, step, n, e)
	if err == nil || !strings.Contains(err.Error(), "--gpu-memory") || !strings.Contains(err.Error(), "at least 0.0 MiB (37096 bytes) is needed") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a budget one byte short: %v", err)
	}
}

// TestListRoom: the lists take their share of the free room (half by
// default), never more than every list, and nothing from a deficit.
func TestListRoom(t *testing.T) {
	for _, c := range []struct {
		free  int64
		share float64
		lists int64
		want  int64
	}{{1000, 0, 10_000, 500}, {1000, 0.25, 10_000, 250}, {1000, 1, 600, 600}, {-5, 0.5, 600, 0}, {0, 0, 600, 0}} {
		if got := listRoom(c.free, c.share, c.lists); got != c.want {
			t.Errorf("listRoom(%d, %g, %d) = %d, want %d", c.free, c.share, c.lists, got, c.want)
		}
	}
}

// sampleCounter is a CPU backend that counts the live destinations of
// every SampleLayer: each reads one neighbour list (no mask here).
type sampleCounter struct {
	*cpu.Backend
	dsts int64
}

func (s *sampleCounter) SampleLayer(g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block) {
	s.Backend.SampleLayer(g, dst, nDst, fanout, r, out)
	n := make([]int32, 1)
	s.Read(n, nDst.Buf, nDst.Off)
	s.dsts += int64(min(int(n[0]), nDst.Cap))
}

// TestHostTopology: on the CPU (standing for a GPU: the record backend,
// budgets through its memory statistics), a budget one byte short of the
// whole graph with the per-vertex tables, the margin and the step's
// estimate puts the lists on the host (auto); the highest-degree vertices' lists that fit half of what the
// step leaves go to backend memory, exactly graph.Replicated's set, the
// feature cache takes the rest, and the run trains bitwise as the replay
// driver with the whole graph resident. The lists read from either tier
// add up to the destinations sampled, and the peak stays in the budget.
func TestHostTopology(t *testing.T) {
	ds := narrow(t, 8)
	_, cfg := tiny(t)
	cfg.Epochs, cfg.Batch = 1, 64
	want := replayLosses(t, ds, cfg)

	// The margin holds what the replay driver allocates after the plan
	// (the evaluation's ids, capture scratch: about 100 KB here).
	const margin = 128 << 10
	g := ds.Graph
	step := StepEstimate(g, cfg.Batch, cfg.Fanouts, ds.FeatDim)
	budget := wholeGraphBytes(g.NumNodes, g.NumEdges()) + vertexTableBytes*g.NumNodes + margin + step - 1
	be := &sampleCounter{Backend: cpu.New(2)}
	var got []float32
	var log strings.Builder
	topt := train.Options{OnStep: func(_, _ int, l float32) { got = append(got, l) }}
	_, st, err := Run(context.Background(), record.New(be), ds, cfg, topt, Options{Budget: budget, Margin: margin, CacheRows: -1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("host topology:\n%v\nreplay, the whole graph resident:\n%v", got, want)
	}
	p := st.Placement
	tp := p.Topology
	if !tp.Host {
		t.Fatalf("a budget of %d bytes kept the whole graph (%d bytes) on the GPU", budget, wholeGraphBytes(g.NumNodes, g.NumEdges()))
	}
	before := p.Resident - tp.GPUListBytes() // resident once the step was provisioned
	room := (budget - before - margin) / 2
	ids := graph.Replicated(g, room)
	var edges int64
	for _, v := range ids {
		edges += g.Degree(int64(v))
	}
	if tp.GPULists != int64(len(ids)) || tp.GPUEdges != edges || tp.GPULists == 0 || tp.GPULists == g.NumNodes {
		t.Errorf("lists on the GPU: %d vertices, %d edges; want graph.Replicated's %d and %d in %d bytes, some but not all", tp.GPULists, tp.GPUEdges, len(ids), edges, room)
	}
	if free := budget - p.Resident - margin; p.CacheRows != min(p.Rows, free/p.RowBytes) || p.CacheRows == 0 || p.CacheRows == p.Rows {
		t.Errorf("feature cache %d rows of %d bytes in the %d bytes left after the lists, want some but not all", p.CacheRows, p.RowBytes, free)
	}
	if p.Peak() > budget || st.PeakBytes > budget {
		t.Errorf("planned peak %d, measured %d, budget %d", p.Peak(), st.PeakBytes, budget)
	}
	r := st.Lists
	if r == nil || r.Local == 0 || r.Host == 0 || r.Replica != 0 || r.Remote != 0 || r.Lists() != be.dsts {
		t.Errorf("list reads %+v, want some from each tier adding up to the %d destinations sampled", r, be.dsts)
	}
	for _, line := range []string{"a pointer table over 16384 vertices", "neighbour lists in GPU memory", "neighbour lists in host memory"} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("the plan lacks %q:\n%s", line, log.String())
		}
	}
	t.Logf("%s lists: %+v of %d destinations", log.String(), *r, be.dsts)
}

// TestHostTopologyRefused: a budget that cannot hold the pointer table is
// refused before anything is placed, in one line naming --gpu-memory.
func TestHostTopologyRefused(t *testing.T) {
	ds, cfg := tiny(t)
	be := cpu.New(1)
	_, _, err := Run(context.Background(), record.New(be), ds, cfg, train.Options{}, Options{Budget: 100 << 10, Margin: 1024, CacheRows: -1})
	if err == nil || !strings.Contains(err.Error(), "--gpu-memory") || !strings.Contains(err.Error(), "pointer table") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a 100 KiB budget: %v", err)
	}
	if be.InUseBytes() != 0 {
		t.Errorf("%d bytes left in use after the refusal", be.InUseBytes())
	}
}

// narrow is tiny with the first dim features of each row: the CPU counts
// its host tier of features as backend memory (a GPU does not), so the
// graph must outweigh the features for a budget to leave room for both
// tiers of lists, as papers-sim's 3.1 GB of lists do on a GPU.
func narrow(t *testing.T, dim int) *dataset.Dataset {
	ds, _ := tiny(t)
	out := *ds
	out.FeatDim, out.Features = dim, make([]float32, 0, int(ds.Graph.NumNodes)*dim)
	for v := range int(ds.Graph.NumNodes) {
		out.Features = append(out.Features, ds.Features[v*ds.FeatDim:v*ds.FeatDim+dim]...)
	}
	return &out
}

package sample

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

func TestSamplerBlocks(t *testing.T) {
	g := randomGraph(21, 2000, 90)
	fanouts := []int{7, -1, 3}
	seeds := randomIDs(22, 2000, 600, true)
	key := rng.Key{Seed: 5, Epoch: 1, Step: 9}
	s, err := NewSampler(g, fanouts, 2)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := s.Sample(seeds, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(mb.Blocks) != 3 || !slices.Equal(mb.Seeds, seeds) {
		t.Fatalf("%d blocks, seeds copied: %v", len(mb.Blocks), slices.Equal(mb.Seeds, seeds))
	}
	dst := seeds
	for h, f := range fanouts {
		b := &mb.Blocks[len(fanouts)-1-h]
		if b.NumDst != len(dst) || !slices.Equal(b.SrcIDs[:b.NumDst], dst) {
			t.Fatalf("hop %d: destinations are not the previous sources, first", h)
		}
		// Same neighbours as one Layer call with stream h.
		k := key
		k.Stream = uint32(h)
		wantPtr, wantNbrs := refLayer(g, dst, f, k)
		if !slices.Equal(b.Indptr, wantPtr) || b.NumEdges() != len(wantNbrs) {
			t.Fatalf("hop %d: offsets differ from the reference", h)
		}
		for e, l := range b.Indices {
			if b.SrcIDs[l] != wantNbrs[e] {
				t.Fatalf("hop %d edge %d: source %d, want %d", h, e, b.SrcIDs[l], wantNbrs[e])
			}
		}
		uniq := map[int32]bool{}
		for _, v := range b.SrcIDs {
			if uniq[v] {
				t.Fatalf("hop %d: source %d listed twice", h, v)
			}
			uniq[v] = true
		}
		dst = b.SrcIDs
	}
	if !slices.Equal(mb.InputIDs(), mb.Blocks[0].SrcIDs) {
		t.Fatal("InputIDs is not the bottom block's sources")
	}
}

func TestSamplerThreadsAndReuse(t *testing.T) {
	g := randomGraph(31, 3000, 200)
	seeds := randomIDs(32, 3000, 1500, true)
	key := rng.Key{Seed: 77, Step: 3}
	var ref *MiniBatch
	reuse := &MiniBatch{}
	for _, threads := range []int{1, 2, 7} {
		s, err := NewSampler(g, []int{15, 10, 5}, threads)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := s.Sample(seeds, key)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = mb
		} else if !reflect.DeepEqual(mb, ref) {
			t.Fatalf("threads %d: minibatch differs from threads 1", threads)
		}
		// Reusing a minibatch after a different batch gives the same result.
		if err := s.SampleInto(seeds[:100], rng.Key{Seed: 1}, reuse); err != nil {
			t.Fatal(err)
		}
		if err := s.SampleInto(seeds, key, reuse); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(reuse, ref) {
			t.Fatalf("threads %d: SampleInto into a used minibatch differs", threads)
		}
	}
	s, _ := NewSampler(g, []int{15, 10, 5}, 2)
	other, err := s.Sample(seeds, rng.Key{Seed: 77, Step: 4})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Blocks[2].Indices, ref.Blocks[2].Indices) {
		t.Fatal("steps 3 and 4 sampled the same top block")
	}
}

func TestSamplerErrors(t *testing.T) {
	g := randomGraph(41, 100, 10)
	if _, err := NewSampler(g, nil, 1); err == nil {
		t.Error("no fanouts: want an error")
	}
	if _, err := NewSampler(g, []int{5, -2}, 1); err == nil || !strings.Contains(err.Error(), "hop 1") {
		t.Errorf("fanout -2: err = %v", err)
	}
	if _, err := NewSampler(g, make([]int, MaxHops+1), 1); err == nil {
		t.Error("too many hops: want an error")
	}
	wide := &graph.CSR{NumNodes: 3, Indptr: []int64{0, 1, 2, 2}, Indices64: []int64{1, 0}}
	if _, err := NewSampler(wide, []int{2}, 1); err == nil || !strings.Contains(err.Error(), "int64") {
		t.Errorf("wide graph: err = %v", err)
	}
	bad := &graph.CSR{NumNodes: 3, Indptr: []int64{0, 1}, Indices: []int32{0}}
	if _, err := NewSampler(bad, []int{2}, 1); err == nil {
		t.Error("short indptr: want an error")
	}
	if _, err := NewSampler(nil, []int{2}, 1); err == nil {
		t.Error("nil graph: want an error")
	}
	s, err := NewSampler(g, []int{3, 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		seeds []int32
		want  string
	}{
		{[]int32{1, 100}, "seed 100 (position 1)"},
		{[]int32{-3}, "seed -3 (position 0)"},
		{[]int32{4, 9, 4}, "seed 4 appears twice (positions 0 and 2)"},
	} {
		if _, err := s.Sample(c.seeds, rng.Key{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("seeds %v: err = %v, want it to name %q", c.seeds, err, c.want)
		}
	}
	// Empty seeds and a graph without edges are fine.
	if mb, err := s.Sample(nil, rng.Key{}); err != nil || mb.Blocks[0].NumDst != 0 {
		t.Errorf("empty seeds: %v", err)
	}
	empty := &graph.CSR{NumNodes: 4, Indptr: make([]int64, 5)}
	se, err := NewSampler(empty, []int{-1, 5}, 2)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := se.Sample([]int32{3, 1}, rng.Key{})
	if err != nil || !slices.Equal(mb.InputIDs(), []int32{3, 1}) || mb.Blocks[0].NumEdges() != 0 {
		t.Errorf("edgeless graph: %v %v", err, mb)
	}
}

func TestEnvelopeBoundsSampledBatches(t *testing.T) {
	g := randomGraph(51, 1500, 300)
	for _, fanouts := range [][]int{{15, 10, 5}, {-1, 3}, {0, 4}, {2, -1, -1}} {
		const batch = 64
		caps := Envelope(g, batch, fanouts)
		if len(caps) != len(fanouts) {
			t.Fatalf("%d caps for %d fanouts", len(caps), len(fanouts))
		}
		s, err := NewSampler(g, fanouts, 2)
		if err != nil {
			t.Fatal(err)
		}
		for step := uint32(0); step < 20; step++ {
			seeds := randomIDs(uint64(step), 1500, batch, true)
			mb, err := s.Sample(seeds, rng.Key{Seed: 3, Step: step})
			if err != nil {
				t.Fatal(err)
			}
			for l, b := range mb.Blocks {
				c := caps[l]
				if b.NumDst > c.Dst || b.NumEdges() > c.Edges || b.NumSrc() > c.Src {
					t.Fatalf("fanouts %v block %d: dst %d edges %d src %d exceed %+v",
						fanouts, l, b.NumDst, b.NumEdges(), b.NumSrc(), c)
				}
			}
		}
	}
}

func TestEnvelopeValues(t *testing.T) {
	g := starGraph(10) // 11 vertices, 10 edges, max degree 10
	got := Envelope(g, 2, []int{3, 2, -1})
	want := []Caps{
		{Dst: 11, Edges: 10, Src: 11}, // hop 2: k = Δ = 10, edges min(10, 11·10), src min(11, 21)
		{Dst: 8, Edges: 10, Src: 11},  // hop 1: k = 2, edges min(10, 8·2), src min(11, 18)
		{Dst: 2, Edges: 6, Src: 8},    // hop 0: 2 seeds, k = 3
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Envelope = %+v, want %+v", got, want)
	}
	if got := Envelope(g, 100, []int{0}); got[0] != (Caps{Dst: 11, Edges: 0, Src: 11}) {
		t.Fatalf("fanout 0: %+v", got[0])
	}
}

// A sampler that reuses its MiniBatch allocates nothing per batch on one
// thread once its buffers have grown.
func TestSampleIntoAllocations(t *testing.T) {
	g := randomGraph(61, 3000, 100)
	s, err := NewSampler(g, []int{15, 10, 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	seeds := randomIDs(62, 3000, 256, true)
	mb := &MiniBatch{}
	step := uint32(0)
	sample := func() {
		step++
		if err := s.SampleInto(seeds, rng.Key{Seed: 1, Step: step % 4}, mb); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		sample() // grow every buffer to the largest of the four steps
	}
	if a := testing.AllocsPerRun(20, sample); a != 0 {
		t.Errorf("%.1f allocations per batch, want 0", a)
	}
}

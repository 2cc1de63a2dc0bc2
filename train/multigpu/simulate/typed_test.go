package simulate

import (
	"slices"
	"sync"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// TestTypedCountsMatchTraining: the sizes a typed simulation counts for
// every rank and step (every layer's sources of each type and edges of
// each relation) are the ones 2 CPU devices' typed plans hold after each
// step when they train igbh-sim at 1/2000 of IGB-H medium with the same
// flags and seed, with a relation's own fanouts.
func TestTypedCountsMatchTraining(t *testing.T) {
	p, err := rmat.LookupVariant("igbh-sim", rmat.Variant{Scale: 0.0005})
	if err != nil {
		t.Fatal(err)
	}
	ds := traintest.Generate(t, p)
	cfg := train.Defaults()
	cfg.Model, cfg.Layers, cfg.Hidden, cfg.Fanouts, cfg.Batch = "rsage", 2, 16, []int{5, 3}, 256
	cfg.Dropout, cfg.Epochs = 0, 1
	cfg.RelationFanouts = map[string][]int{"cites": {4, 2}}
	const n, steps = 2, 3
	var mu sync.Mutex
	got := map[[2]int][]TypedLayer{} // (step, rank): the plan's sizes
	trainSteps(t, ds, cfg, n, steps, func(ranks []multigpu.Rank) {
		for i := range ranks {
			var tr *train.Trainer
			ranks[i].Started = func(x *train.Trainer) { tr = x }
			next := ranks[i].Options.OnStep
			ranks[i].Options.OnStep = func(epoch, step int, loss float32) {
				sizes := planSizes(t, tr)
				mu.Lock()
				got[[2]int{step, i}] = sizes
				mu.Unlock()
				if next != nil {
					next(epoch, step, loss)
				}
			}
		}
	})
	fanouts, err := cfg.TypedFanouts(ds)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunTyped(ds, TypedConfig{Hosts: 1, Devices: n, Batch: cfg.Batch, Fanouts: fanouts, Seed: cfg.Seed, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	for s, st := range res.Steps {
		for r, rs := range st.Ranks {
			want, ok := got[[2]int{s, r}]
			if !ok {
				t.Fatalf("training kept no sizes of step %d rank %d", s, r)
			}
			if !slices.EqualFunc(rs.Layers, want, func(a, b TypedLayer) bool {
				return slices.Equal(a.Src, b.Src) && slices.Equal(a.Edges, b.Edges)
			}) {
				t.Errorf("step %d rank %d: simulated %+v, trained %+v", s, r, rs.Layers, want)
			}
			if rs.Seeds != cfg.Batch/n || rs.Edges == 0 || rs.Layers[0].Edges[0] == 0 {
				t.Errorf("step %d rank %d: %d seeds, %d edges", s, r, rs.Seeds, rs.Edges)
			}
		}
	}
	if res.Steps[0].Ranks[0].Layers[0].Src[0] == res.Steps[0].Ranks[1].Layers[0].Src[0] && res.Steps[1].Ranks[0].Edges == res.Steps[1].Ranks[1].Edges {
		t.Errorf("both ranks sampled alike: %+v", res.Steps[:2])
	}
}

// planSizes are the live sizes of tr's typed plan after a step: every
// layer's sources per type and edges per relation (bottom first).
func planSizes(t *testing.T, tr *train.Trainer) []TypedLayer {
	p := tr.Plan()
	counts := make([]int32, p.SizeCounts().Len())
	tr.Backend().Read(counts, p.SizeCounts(), 0)
	if err := tr.Backend().Sync(); err != nil {
		t.Error(err)
	}
	th := p.Typed
	out := make([]TypedLayer, len(th.Src))
	for l := range out {
		for _, c := range th.Src[l] {
			out[l].Src = append(out[l].Src, int64(counts[c.Off]))
		}
		for _, b := range th.Rels[l] {
			out[l].Edges = append(out[l].Edges, int64(counts[b.NumEdges.Off]))
		}
	}
	return out
}

// TestTypedRankStepSums: two ranks' figures add, take their larger ones
// figure by figure and divide into their mean, layer by layer.
func TestTypedRankStepSums(t *testing.T) {
	a := TypedRankStep{Seeds: 4, Edges: 10, RowBytes: 80, Layers: []TypedLayer{{Src: []int64{3, 7}, Edges: []int64{6, 4}}}}
	b := TypedRankStep{Seeds: 4, Edges: 12, RowBytes: 60, Layers: []TypedLayer{{Src: []int64{5, 1}, Edges: []int64{2, 10}}}}
	var sum, most TypedRankStep
	for _, x := range []TypedRankStep{a, b} {
		sum, most = sum.Add(x), most.Max(x)
	}
	mean := sum.Div(2)
	if most.Edges != 12 || most.RowBytes != 80 || !slices.Equal(most.Layers[0].Src, []int64{5, 7}) || !slices.Equal(most.Layers[0].Edges, []int64{6, 10}) {
		t.Errorf("largest %+v", most)
	}
	if mean.Seeds != 4 || mean.Edges != 11 || mean.RowBytes != 70 || !slices.Equal(mean.Layers[0].Src, []int64{4, 4}) || !slices.Equal(mean.RelEdges(), []int64{4, 7}) {
		t.Errorf("mean %+v", mean)
	}
	if a.Layers[0].Src[0] != 3 || b.Layers[0].Edges[1] != 10 {
		t.Errorf("the ranks' own figures changed: %+v %+v", a, b)
	}
}

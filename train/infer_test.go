package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/graph"
)

// randomData is a small undirected random graph (vertex 0 isolated, one
// vertex of high degree) with random features and labels.
func randomData(t *testing.T, n, pairs int) *dataset.Dataset {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	var src, dst []int32
	for range pairs {
		src = append(src, int32(1+r.IntN(n-1)))
		dst = append(dst, int32(1+r.IntN(n-1)))
	}
	for v := 2; v < n; v += 2 {
		src, dst = append(src, 1), append(dst, int32(v)) // vertex 1 is a hub
	}
	g, err := graph.FromEdges(int64(n), src, dst, graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	ds := &dataset.Dataset{Name: "random", Graph: g, FeatDim: 5, NumClasses: 3, Symmetric: true}
	ds.Features = make([]float32, n*ds.FeatDim)
	for i := range ds.Features {
		ds.Features[i] = float32(2*r.Float64() - 1)
	}
	ds.Labels = make([]int32, n)
	for v := range ds.Labels {
		ds.Labels[v] = int32(r.IntN(3))
		switch v % 3 {
		case 0:
			ds.Train = append(ds.Train, int64(v))
		case 1:
			ds.Valid = append(ds.Valid, int64(v))
		default:
			ds.Test = append(ds.Test, int64(v))
		}
	}
	return ds
}

func inferConfig(kind string, layers int) Config {
	c := Defaults()
	c.Model, c.Layers, c.Hidden, c.Batch = kind, layers, 8, 16
	c.Fanouts = slices.Repeat([]int{-1}, layers)
	c.LR, c.Dropout = 0.05, 0.2
	if kind == "gat" {
		c.Heads, c.OutHeads, c.AttnDropout = 2, 3, 0.3
	}
	return c
}

// trainSteps runs steps training steps on the trainer's plan, so that the
// weights and biases move away from their initial values.
func trainSteps(t *testing.T, tr *Trainer, steps int) {
	t.Helper()
	perm := Shuffle(tr.ds.Train, tr.cfg.Seed, 0)
	for s := range steps {
		lo := (s * tr.cfg.Batch) % len(perm)
		tr.plan.SetBatch(perm[lo:min(len(perm), lo+tr.cfg.Batch)], 0, s)
		tr.plan.Sample(tr.in, tr.cfg.Seed)
		tr.plan.Gather(tr.in)
		tr.plan.Learn(tr.model, tr.in, tr.cfg.Seed, tr.adam)
		if err := tr.sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// inferHost runs InferAllWith and reads the logits to the host.
func inferHost(t *testing.T, tr *Trainer, o InferOptions) []float32 {
	t.Helper()
	b, err := tr.InferAllWith(o)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.be.Free(b)
	want := int(tr.ds.Graph.NumNodes) * tr.ds.NumClasses
	if b.Len() != want {
		t.Fatalf("logits have %d elements, want %d", b.Len(), want)
	}
	out := make([]float32, b.Len())
	tr.be.Read(out, b, 0)
	return out
}

// closeTo reports whether a and b agree within rel relative to the larger
// of 1 and the largest magnitude in want.
func closeTo(got, want []float32, rel float64) (int, bool) {
	scale := 1.0
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= rel*scale) {
			return i, false
		}
	}
	return 0, true
}

// TestInferMatchesFullNeighbourForward compares layer-wise inference with
// the multi-hop forward over blocks sampled with all neighbours, for both
// models and 1 to 3 layers, with chunks of 7 and 1000 vertices.
func TestInferMatchesFullNeighbourForward(t *testing.T) {
	ds := randomData(t, 60, 90)
	seeds := []int32{0, 1, 5, 17, 33, 59, 42, 2}
	for _, kind := range []string{"sage", "gcn", "gin", "gat"} {
		for _, layers := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s-%d", kind, layers), func(t *testing.T) {
				inferMatchesForward(t, ds, seeds, inferConfig(kind, layers))
			})
		}
	}
}

// inferMatchesForward trains a model of cfg on ds for a few steps, then
// requires layer-wise inference (in chunks of 7 and of 1000) to give the
// seeds the logits of a multi-hop forward pass over all neighbours.
func inferMatchesForward(t *testing.T, ds *dataset.Dataset, seeds []int32, cfg Config) {
	tr, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	trainSteps(t, tr, 3)
	p := tr.plan
	p.SetBatch(seeds, 0, 0)
	p.Sample(tr.in, 1)
	p.Gather(tr.in)
	_, _, lb := p.Predict(tr.model, tr.in, 1)
	classes := ds.NumClasses
	multi := make([]float32, len(seeds)*classes)
	tr.be.Read(multi, lb, 0)
	if err := tr.sync(); err != nil {
		t.Fatal(err)
	}
	small := inferHost(t, tr, InferOptions{Chunk: 7})
	big := inferHost(t, tr, InferOptions{Chunk: 1000})
	if i, ok := closeTo(small, big, 1e-6); !ok {
		t.Fatalf("chunks of 7 and 1000 differ at element %d: %v vs %v", i, small[i], big[i])
	}
	want := make([]float32, 0, len(multi))
	for _, v := range seeds {
		want = append(want, small[int(v)*classes:(int(v)+1)*classes]...)
	}
	if i, ok := closeTo(want, multi, 1e-4); !ok {
		t.Fatalf("seed %d class %d: layer-wise %v, multi-hop %v", seeds[i/classes], i%classes, want[i], multi[i])
	}
}

// TestInferTightEdgeCapacity splits chunks by edges: the capacity equals the
// largest degree, so most chunks are cut before they reach Chunk vertices.
func TestInferTightEdgeCapacity(t *testing.T) {
	ds := randomData(t, 60, 90)
	tr, err := New(cpu.New(2), ds, inferConfig("gcn", 2), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	trainSteps(t, tr, 2)
	maxDeg := maxDegree(ds.Graph)
	b := chunkBounds(ds.Graph, 1000, maxDeg)
	if len(b) < 4 {
		t.Fatalf("edge capacity %d gives %d chunks; want several", maxDeg, len(b)-1)
	}
	for c := range len(b) - 1 {
		if e := ds.Graph.Indptr[b[c+1]] - ds.Graph.Indptr[b[c]]; e > maxDeg || b[c+1] <= b[c] {
			t.Fatalf("chunk %d [%d, %d) has %d edges, capacity %d", c, b[c], b[c+1], e, maxDeg)
		}
	}
	tight := inferHost(t, tr, InferOptions{Chunk: 1000, Edges: int(maxDeg)})
	loose := inferHost(t, tr, InferOptions{Chunk: 1000})
	if i, ok := closeTo(tight, loose, 1e-6); !ok {
		t.Fatalf("element %d: %v with a tight edge capacity, %v with a loose one", i, tight[i], loose[i])
	}
	if _, err := tr.InferAllWith(InferOptions{Edges: int(maxDeg) - 1}); err == nil {
		t.Fatal("an edge capacity below the largest degree was accepted")
	}
}

// TestEvaluateFullEval compares Evaluate and Predict with FullEval against
// the sampled path with all neighbours on an identical twin, before and
// after training steps (which must invalidate the cached logits).
func TestEvaluateFullEval(t *testing.T) {
	ds := randomData(t, 60, 90)
	for _, kind := range []string{"sage", "gcn"} {
		cfg := inferConfig(kind, 2)
		cfg.Batch = 8
		full := cfg
		full.FullEval = true
		ref, err := New(cpu.New(2), ds, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Close()
		tr, err := New(cpu.New(2), ds, full, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		all := make([]int64, ds.Graph.NumNodes)
		for v := range all {
			all[v] = int64(v)
		}
		for round := range 2 {
			for _, ids := range [][]int64{ds.Valid, ds.Test} {
				accF, lossF, err := tr.Evaluate(ids)
				if err != nil {
					t.Fatal(err)
				}
				accR, lossR, err := ref.Evaluate(ids)
				if err != nil {
					t.Fatal(err)
				}
				if accF != accR || !(math.Abs(lossF-lossR) <= 1e-4*max(1, lossR)) {
					t.Fatalf("%s round %d: full eval acc %v loss %v, sampled all-neighbour acc %v loss %v", kind, round, accF, lossF, accR, lossR)
				}
			}
			pf, err := tr.Predict(all)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := ref.Predict(all)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pf, pr) {
				t.Fatalf("%s round %d: predictions differ:\n%v\n%v", kind, round, pf, pr)
			}
			trainSteps(t, tr, 3)
			trainSteps(t, ref, 3)
		}
	}
}

// TestFullLogitsCache checks that the cached logits are reused while the
// parameters stay and recomputed once they change.
func TestFullLogitsCache(t *testing.T) {
	ds := randomData(t, 60, 90)
	cfg := inferConfig("sage", 2)
	cfg.FullEval = true
	tr, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	a, err := tr.inferredLogits()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := tr.inferredLogits(); err != nil || b != a {
		t.Fatalf("unchanged parameters: got a new table (%v)", err)
	}
	before := make([]float32, a.Len())
	tr.be.Read(before, a, 0)
	trainSteps(t, tr, 1)
	c, err := tr.inferredLogits()
	if err != nil {
		t.Fatal(err)
	}
	after := make([]float32, c.Len())
	tr.be.Read(after, c, 0)
	if slices.Equal(before, after) {
		t.Fatal("the logits did not change after a training step")
	}
}

// BenchmarkInferAll times layer-wise inference of every vertex of the tiny
// preset (2-layer SAGE, hidden 64, chunks of Config.Batch vertices).
func BenchmarkInferAll(b *testing.B) {
	p, err := rmat.Lookup("tiny")
	if err != nil {
		b.Fatal(err)
	}
	ds, err := rmat.Generate(p, rmat.Options{Seed: 1, Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	cfg := Defaults()
	cfg.Layers, cfg.Hidden, cfg.Batch, cfg.Fanouts = p.Layers, p.Hidden, p.Batch, p.Fanouts
	tr, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	b.ReportAllocs()
	for b.Loop() {
		l, err := tr.InferAll()
		if err != nil {
			b.Fatal(err)
		}
		tr.be.Free(l)
	}
	b.ReportMetric(float64(ds.Graph.NumEdges()*int64(cfg.Layers))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

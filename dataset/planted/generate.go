package planted

import (
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/parallel"
	"github.com/fanout-gnn/fanout/rng"
)

// Options controls Generate.
type Options struct {
	Seed    uint64
	Threads int // worker goroutines; <= 0 means GOMAXPROCS. The result does not depend on it.
	// NoReverse leaves out the relations' reverses (dataset.AddReverse),
	// which are added by default.
	NoReverse bool
	// Progress, when non-nil, is told how far each stage has come
	// ("communities", "edges", "more edges", "reverse", "features").
	// Calls are serialized but may come from any goroutine.
	Progress func(stage string, done, total int64)
}

// Generate builds the typed dataset s describes (see the package
// comment): every relation with exactly its Edges distinct edges, then the
// reverses unless o.NoReverse; the target's labels (its communities, every
// vertex labelled) and a split of s.Train, s.Valid and s.Test of its
// vertices drawn at random, each sorted; features for every type with a
// width.
func Generate(name string, s Schema, o Options) (*dataset.Dataset, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	threads := parallel.Threads(o.Threads)
	prog := parallel.NewProgress(o.Progress)
	prog.Start("communities", int64(len(s.Types)))
	pops := make([]*population, len(s.Types))
	types := make([]dataset.VertexType, len(s.Types))
	for i, t := range s.Types {
		pops[i] = newPopulation(t.Count, s.Classes, i, s.Skew, o.Seed, threads)
		types[i] = dataset.VertexType{Name: t.Name, Count: t.Count, FeatDim: t.FeatDim}
		prog.Add(1)
	}
	rels := make([]dataset.Relation, len(s.Relations))
	for i, r := range s.Relations {
		d := newDrawer(pops[r.Src], pops[r.Dst], i, s.Affinity, o.Seed, threads, prog)
		g, err := d.exact(r.Edges, s.Types[r.Dst].Count, s.Types[r.Src].Count, r.Src == r.Dst, i, o.Seed)
		if err != nil {
			return nil, fmt.Errorf("schema %s: relation %s: %w", name, r.Name, err)
		}
		rels[i] = dataset.Relation{Name: r.Name, Src: r.Src, Dst: r.Dst, Graph: g}
	}
	if !o.NoReverse {
		prog.Start("reverse", int64(len(rels)))
		var err error
		if rels, err = dataset.AddReverse(types, rels, threads); err != nil {
			return nil, err
		}
		prog.Add(int64(len(s.Relations)))
	}
	for i, t := range s.Types {
		if t.FeatDim > 0 {
			types[i].Features = features(pops[i].comm, s.Classes, t.FeatDim, i, entryScale(t.Signal, t.FeatDim), o.Seed, threads, prog)
		}
	}
	target := s.Types[s.Target]
	d := &dataset.Dataset{
		Name: name, Types: types, Relations: rels, Target: s.Target, FeatDim: target.FeatDim,
		Labels: pops[s.Target].comm, NumClasses: s.Classes,
		Preprocessing: dataset.TypedSteps(!o.NoReverse),
		Source:        fmt.Sprintf("planted communities, preset %s, seed %d", name, o.Seed),
	}
	d.Train, d.Valid, d.Test = split(target.Count, [3]int64{s.Train, s.Valid, s.Test}, o.Seed)
	return d, nil
}

// split shuffles the ids 0..n-1 (Fisher-Yates driven by Philox: step i,
// from n-1 down to 1, swaps i with Uniform(Word(i, 0), i+1)) and cuts the
// sizes' sets from the front, in order, each sorted.
func split(n int64, sizes [3]int64, seed uint64) (train, valid, test []int64) {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	k := key(seed, streamSplit, 0)
	for i := n - 1; i > 0; i-- {
		j := int64(rng.Uniform(k.Word(uint32(i), 0), uint32(i+1)))
		ids[i], ids[j] = ids[j], ids[i]
	}
	var out [3][]int64
	var at int64
	for s, size := range sizes {
		out[s] = slices.Clone(ids[at : at+size])
		slices.Sort(out[s])
		at += size
	}
	return out[0], out[1], out[2]
}

// Community describes a graph of one vertex type with planted
// communities, the one-type presets' community labels.
type Community struct {
	Vertices int64
	Pairs    int64 // edges drawn before they are symmetrized and deduplicated
	Classes  int
	FeatDim  int
	// Signal is the centroids' distance at width SignalDim (0: FeatDim);
	// each entry has the same signal at any width.
	Signal    float64
	SignalDim int
	Affinity  float64
	Skew      int
}

// OneType draws c's graph (Pairs edges as Generate draws a relation's,
// symmetrized, without self loops or repeats; rows sorted), every
// vertex's community ([Vertices] in [0, Classes)) and features ([Vertices,
// FeatDim] row-major: the community's centroid plus unit noise).
func OneType(c Community, o Options) (g *graph.CSR, comm []int32, feat []float32, err error) {
	if c.Vertices < 2 || c.Vertices > dataset.MaxTypeVertices || c.Pairs < 0 || c.Pairs >= 1<<32 || c.Classes < 2 || c.FeatDim < 1 || c.SignalDim < 0 {
		return nil, nil, nil, fmt.Errorf("community graph: %d vertices, %d pairs, %d classes, width %d", c.Vertices, c.Pairs, c.Classes, c.FeatDim)
	}
	s := Schema{Classes: c.Classes, Affinity: c.Affinity, Skew: c.Skew}
	if err := s.checkShape(); err != nil {
		return nil, nil, nil, err
	}
	threads := parallel.Threads(o.Threads)
	prog := parallel.NewProgress(o.Progress)
	p := newPopulation(c.Vertices, c.Classes, 0, c.Skew, o.Seed, threads)
	d := newDrawer(p, p, 0, c.Affinity, o.Seed, threads, prog)
	prog.Start("edges", c.Pairs)
	src, dst := d.draw(0, c.Pairs)
	bo := graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true, Threads: threads, Progress: o.Progress}
	if g, err = graph.FromEdges(c.Vertices, src, dst, bo); err != nil {
		return nil, nil, nil, err
	}
	width := c.FeatDim
	if c.SignalDim > 0 {
		width = c.SignalDim
	}
	return g, p.comm, features(p.comm, c.Classes, c.FeatDim, 0, entryScale(c.Signal, width), o.Seed, threads, prog), nil
}

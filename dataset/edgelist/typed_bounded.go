package edgelist

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
)

// typedGraph is one graph a bounded typed import builds: a relation, or a
// relation's reverse (its edges read again, each row the source's).
type typedGraph struct {
	rel   int // index in TypedOptions.Relations
	rows  int64
	shape keyShape
}

// graphsOf lists the graphs of o's relations: each relation's own (within
// a type: self loops dropped, both directions unless NoReverse), then the
// reverses of those between two types, in the relations' order, as
// dataset.AddReverse orders them.
func graphsOf(o TypedOptions, types []dataset.VertexType) []typedGraph {
	var own, rev []typedGraph
	for i, r := range o.Relations {
		src, dst := o.typeIndex(r.Src), o.typeIndex(r.Dst)
		if src == dst {
			own = append(own, typedGraph{i, types[dst].Count, keyShape{dropLoops: true, forward: true, backward: !o.NoReverse}})
			continue
		}
		own = append(own, typedGraph{i, types[dst].Count, keyShape{forward: true}})
		if !o.NoReverse {
			rev = append(rev, typedGraph{i, types[src].Count, keyShape{backward: true}})
		}
	}
	return append(own, rev...)
}

// typedBounded builds every relation's graph (and reverse) within
// o.Memory: one graph at a time through the budget's sort buffer and
// sorted runs, in a directory of its own under a scratch directory (as
// ImportBounded's), each mapped once built.
func typedBounded(ctx context.Context, o TypedOptions, tables []*nodes, types []dataset.VertexType) (*Imported, error) {
	d := &dataset.Dataset{Types: types}
	im, err := inBudget(o.Options, func(b *bounded) error {
		for k, tg := range graphsOf(o, types) {
			g, err := b.typedGraph(ctx, o, tables, tg, filepath.Join(b.im.scratch.dir, fmt.Sprintf("graph-%04d", k)))
			if err != nil {
				return err
			}
			r := o.Relations[tg.rel]
			rel := dataset.Relation{Name: r.Name, Src: o.typeIndex(r.Src), Dst: o.typeIndex(r.Dst), Graph: g}
			if tg.shape.backward && !tg.shape.forward {
				rel.Name, rel.Src, rel.Dst = dataset.ReversePrefix+r.Name, rel.Dst, rel.Src
			}
			d.Relations = append(d.Relations, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	im.Dataset = d
	return im, nil
}

// typedGraph reads one relation's edge files into keys of the graph tg
// and merges them into its files in dir, which it maps.
func (b *bounded) typedGraph(ctx context.Context, o TypedOptions, tables []*nodes, tg typedGraph, dir string) (*graph.CSR, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	r := o.Relations[tg.rel]
	_, _, e := o.endsOf(r, tables)
	total, err := filesSize(r.Files)
	if err != nil {
		return nil, err
	}
	b.runs, b.shape = &runSet{dir: dir}, tg.shape
	if err := b.read(ctx, r.Files, e, total); err != nil {
		return nil, err
	}
	if err := b.build(ctx, tg.rows); err != nil {
		return nil, err
	}
	return b.im.mapGraph(dir, tg.rows)
}

package edgelist

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// NodeTable is one vertex type's node table of a typed import: CSV, TSV,
// Parquet, or .npy features in id order.
type NodeTable struct {
	Type, File string
}

// EdgeFiles is one relation of a typed import: its edge files (their
// Options.Src column holds Src's ids, Options.Dst column Dst's).
type EdgeFiles struct {
	Src, Name, Dst string
	Files          []string
}

// TypedOptions controls ImportTyped. Options gives the columns (Src, Dst,
// ID; Label, Split and Draw for the target; Features), Threads, Name,
// Memory, TempDir and Progress; its Nodes and Directed are unused.
type TypedOptions struct {
	Options
	Tables    []NodeTable // one per vertex type, in the dataset's order
	Relations []EdgeFiles
	Target    string // the labelled type
	// NoReverse leaves out the relations' reverses, which are added by
	// default (dataset.AddReverse).
	NoReverse bool
}

// check checks the types' and relations' names: each type once, each
// relation between listed types once, the target a type.
func (o TypedOptions) check() error {
	if len(o.Tables) == 0 || len(o.Relations) == 0 {
		return fmt.Errorf("a typed import needs node tables (--nodes TYPE=FILE) and relations (--edges SRC,REL,DST=FILE)")
	}
	for i, t := range o.Tables {
		if err := dataset.CheckName("--nodes: the type", t.Type); err != nil {
			return err
		}
		if o.typeIndex(t.Type) != i {
			return fmt.Errorf("--nodes: type %s has two tables", t.Type)
		}
	}
	if o.typeIndex(o.Target) < 0 {
		return fmt.Errorf("--target %s: want one of the types of --nodes (%s)", quote.Quote(o.Target), quote.Quote(strings.Join(o.typeNames(), ", ")))
	}
	for i, r := range o.Relations {
		if err := dataset.CheckName("--edges: the relation", r.Name); err != nil {
			return err
		}
		for _, end := range []string{r.Src, r.Dst} {
			if o.typeIndex(end) < 0 {
				return fmt.Errorf("--edges %s,%s,%s: type %s has no --nodes table", r.Src, r.Name, r.Dst, quote.Quote(end))
			}
		}
		if slices.ContainsFunc(o.Relations[:i], func(q EdgeFiles) bool { return q.Src == r.Src && q.Name == r.Name && q.Dst == r.Dst }) {
			return fmt.Errorf("--edges %s,%s,%s is given twice", r.Src, r.Name, r.Dst)
		}
	}
	return nil
}

// typeIndex is the index of the type named name, or -1.
func (o TypedOptions) typeIndex(name string) int {
	return slices.IndexFunc(o.Tables, func(t NodeTable) bool { return t.Type == name })
}

// typeNames lists the types.
func (o TypedOptions) typeNames() []string {
	var names []string
	for _, t := range o.Tables {
		names = append(names, t.Type)
	}
	return names
}

// spec is how type i's table is read: the target's with its labels,
// split and features; another's without labels or split (those columns,
// where the table has them, are not features) and with the --features
// columns it has, all or none, or else its numeric columns, or none.
func (o TypedOptions) spec(i int) tableSpec {
	t := o.Tables[i]
	s := tableSpec{file: t.File, id: o.ID, features: o.Features, bare: true}
	if t.Type == o.Target {
		s.label, s.split = o.Label, o.Split
		return s
	}
	s.some = o.Features != nil
	s.ignore = []string{o.Label}
	if o.Split != "" {
		s.ignore = append(s.ignore, strings.Split(o.Split, ",")...)
	}
	return s
}

// ImportTyped reads a typed graph: each type's node table (its ids become
// the type's dense ids 0..n-1 in row order and are kept, as Import keeps
// them), each relation's edge files (ids looked up in the source's and the
// destination's tables), the target's labels and split (a split column, or
// one drawn per class as Import draws it). Each relation's graph drops
// repeats (and self loops within a type) and gets its reverse unless
// o.NoReverse. With o.Memory set the edges are held within that budget as
// ImportBounded holds them, each relation's graph (and reverse) built from
// sorted runs in a directory of its own under the scratch directory and
// mapped; otherwise in memory (two int32 per edge of the relation being
// read). Close the result once its dataset is written.
func ImportTyped(ctx context.Context, o TypedOptions) (*Imported, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	tables := make([]*nodes, len(o.Tables))
	types := make([]dataset.VertexType, len(o.Tables))
	for i, t := range o.Tables {
		nd, err := readNodes(o.spec(i))
		if err != nil {
			return nil, err
		}
		ids, err := nd.ids.nodeIDs(t.File)
		if err != nil {
			return nil, err
		}
		tables[i] = nd
		types[i] = dataset.VertexType{Name: t.Type, Count: nd.ids.len(), FeatDim: nd.dim, IDs: ids}
		if nd.dim > 0 {
			types[i].Features = nd.feat
		}
	}
	var im *Imported
	var err error
	if o.Memory > 0 {
		im, err = typedBounded(ctx, o, tables, types)
	} else {
		im, err = typedInMemory(ctx, o, tables, types)
	}
	if err != nil {
		return nil, err
	}
	if err := assembleTyped(im.Dataset, tables[o.typeIndex(o.Target)], o); err != nil {
		im.Close()
		return nil, err
	}
	return im, nil
}

// endsOf is relation r's ends: its types' id maps and tables.
func (o TypedOptions) endsOf(r EdgeFiles, tables []*nodes) (src, dst int, e ends) {
	src, dst = o.typeIndex(r.Src), o.typeIndex(r.Dst)
	return src, dst, ends{tables[src].ids, tables[dst].ids, o.Tables[src].File, o.Tables[dst].File}
}

// typedInMemory reads each relation's edges into memory and builds the
// relations (dataset.BuildRelations).
func typedInMemory(ctx context.Context, o TypedOptions, tables []*nodes, types []dataset.VertexType) (*Imported, error) {
	var lists []dataset.EdgeList
	for _, r := range o.Relations {
		src, dst, e := o.endsOf(r, tables)
		var l edges
		for _, f := range r.Files {
			if err := readEdges(ctx, f, o.Options, e, l.add, nil); err != nil {
				return nil, err
			}
		}
		lists = append(lists, dataset.EdgeList{Name: r.Name, Src: src, Dst: dst, From: l.src, To: l.dst})
	}
	rels, err := dataset.BuildRelations(types, lists, dataset.RelationOptions{Reverse: !o.NoReverse, Threads: o.Threads})
	if err != nil {
		return nil, err
	}
	return &Imported{Dataset: &dataset.Dataset{Types: types, Relations: rels}}, nil
}

// assembleTyped completes a typed import's dataset: its name, target,
// labels, classes, split, source and preprocessing.
func assembleTyped(d *dataset.Dataset, target *nodes, o TypedOptions) error {
	ti := o.typeIndex(o.Target)
	d.Name, d.Target, d.FeatDim = o.Name, ti, d.Types[ti].FeatDim
	if d.Name == "" {
		d.Name = tableName(o.Tables[ti].File)
	}
	d.Labels, d.NumClasses = target.labels, target.classes
	file := o.Tables[ti].File
	if o.Split != "" {
		d.Train, d.Valid, d.Test = target.split[0], target.split[1], target.split[2]
		if len(d.Train) == 0 {
			return fmt.Errorf("%s: --split %s puts no vertex in train", file, quote.Quote(o.Split))
		}
	} else {
		var err error
		if d.Train, d.Valid, d.Test, err = dataset.Split(d.Labels, d.NumClasses, o.Draw); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	split := "split from " + o.Split
	if o.Split == "" {
		split = o.Draw.String()
	}
	d.Source = fmt.Sprintf("typed edges of %d relations, nodes of %d types, target %s from %s (%s)",
		len(o.Relations), len(o.Tables), o.Target, filepath.Base(file), split)
	d.Preprocessing = dataset.TypedSteps(!o.NoReverse)
	return nil
}

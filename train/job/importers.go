package job

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/edgelist"
	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/npz"
	"github.com/fanout-gnn/fanout/dataset/ogb"
	"github.com/fanout-gnn/fanout/dataset/planetoid"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// ImportOptions are import's settings for the formats ImportFormat reads.
type ImportOptions struct {
	Name       string // planetoid: cora, citeseer or pubmed; ogb: the manifest's name
	Symmetrize bool   // ogb: add inverse edges
	Split      dataset.SplitOptions
	GraphBolt  graphbolt.Options
	Threads    int
	// Progress, when set, hears ogb's stages (done of total).
	Progress func(stage string, done, total int64)
	// Target and NoReverse are a typed dataset's labelled type (empty:
	// the importer's choice) and whether to leave out the reverse
	// relations (ogb, graphbolt).
	Target    string
	NoReverse bool
}

// ImportFormat reads the dataset of format (ogb, planetoid, npz or
// graphbolt) at src; an OGB folder with .pt split files is a
// link-prediction dataset (ogb.ImportLink).
func ImportFormat(format, src string, o ImportOptions) (*dataset.Dataset, error) {
	if (format == "planetoid" || format == "npz") && (o.Target != "" || o.NoReverse) {
		return nil, fmt.Errorf("%s: --target and --no-reverse are for typed datasets (ogb, graphbolt, edges)", format)
	}
	switch format {
	case "ogb":
		opt := ogb.Options{Name: o.Name, Symmetrize: o.Symmetrize, Threads: o.Threads, Progress: o.Progress, Target: o.Target, NoReverse: o.NoReverse}
		if ogb.IsLink(src) { // ogbl-*: split/<name>/train.pt
			return ogb.ImportLink(src, opt)
		}
		return ogb.Import(src, opt)
	case "planetoid":
		if o.Name == "" {
			return nil, errors.New("planetoid: --name is required (cora, citeseer or pubmed)")
		}
		return planetoid.Import(src, o.Name)
	case "npz":
		ds, err := npz.Import(src, o.Split)
		if errors.Is(err, dataset.ErrSplitTooLarge) {
			err = fmt.Errorf("%w (--train-per-class, --valid, --test)", err)
		}
		return ds, err
	case "graphbolt":
		g := o.GraphBolt
		g.Threads, g.Target, g.NoReverse = o.Threads, o.Target, o.NoReverse
		return graphbolt.Import(src, g)
	}
	return nil, fmt.Errorf("unknown format %s: want ogb, planetoid, npz, graphbolt or edges", quote.Quote(format))
}

// ImportEdges reads an edge list and a node table (package edgelist): in
// memory, or, with o.Memory set, through sorted runs on disk
// (edgelist.ImportBounded, which stops on ctx and removes its scratch),
// saying on log what the runs took. Call done once the dataset, whose graph
// may be mapped from the runs' output, is written.
func ImportEdges(ctx context.Context, files []string, o edgelist.Options, log io.Writer) (ds *dataset.Dataset, done func(), err error) {
	if o.Memory == 0 {
		ds, err = WhileRunning(ctx, func() (*dataset.Dataset, error) { return edgelist.Import(files, o) })
		return ds, func() {}, err
	}
	im, err := edgelist.ImportBounded(ctx, files, o)
	if err != nil {
		return nil, func() {}, err
	}
	st := im.Stats
	fmt.Fprintf(log, "edges: %d read, %d graph entries sorted in %d run(s) on disk, %d extra merge pass(es), %s of scratch at most\n",
		st.Edges, st.Keys, st.Runs, st.Passes, BytesString(float64(st.ScratchPeak)))
	for _, d := range st.Stale {
		fmt.Fprintf(log, "removed %s, left by an interrupted import\n", d)
	}
	return im.Dataset, func() { im.Close() }, nil
}

// ImportTypedEdges reads a typed graph's node tables and edge files
// (edgelist.ImportTyped): in memory, or with o.Memory set through sorted
// runs on disk, saying on log what the runs took. Call done once the
// dataset, whose graphs may be mapped from the runs' output, is written.
func ImportTypedEdges(ctx context.Context, o edgelist.TypedOptions, log io.Writer) (ds *dataset.Dataset, done func(), err error) {
	im, err := edgelist.ImportTyped(ctx, o)
	if err != nil {
		return nil, func() {}, err
	}
	if o.Memory > 0 {
		st := im.Stats
		fmt.Fprintf(log, "edges: %d read, %d graph entries of %d relations sorted in %d run(s) on disk, %d extra merge pass(es), %s of scratch at most\n",
			st.Edges, st.Keys, len(o.Relations), st.Runs, st.Passes, BytesString(float64(st.ScratchPeak)))
		for _, d := range st.Stale {
			fmt.Fprintf(log, "removed %s, left by an interrupted import\n", d)
		}
	}
	return im.Dataset, func() { im.Close() }, nil
}

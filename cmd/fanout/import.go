package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/ogb"
	"github.com/fanout-gnn/fanout/train/job"
)

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "edges" {
		return runImportEdges(ctx, args[1:], stdout, stderr)
	}
	fs := newFlags("import", stderr)
	out := fs.String("out", "", "output dataset directory (required)")
	name := fs.String("name", "", "dataset name (planetoid: cora, citeseer or pubmed; ogb: a name for the manifest)")
	sym := fs.Bool("symmetrize", false, "ogb: add inverse edges (default: OGB's add_inverse_edge for the dataset, true for products)")
	var opts dataset.SplitOptions
	splitFlags(fs, &opts)
	var gb graphbolt.Options
	fs.StringVar(&gb.Feature, "feature", "feat", "graphbolt: the node feature_data entry of the features")
	fs.StringVar(&gb.Task, "task", "", "graphbolt: the task whose sets and labels are imported (default: the first)")
	fs.BoolVar(&gb.Directed, "directed", false, "graphbolt: keep the edges' direction (default: symmetrize)")
	target := fs.String("target", "", "ogb, graphbolt, typed: the labelled vertex type (default: the one with labels, or the task's seeds' type)")
	noReverse := fs.Bool("no-reverse", false, "ogb, graphbolt, typed: leave out the reverse relations (rev_<name>; a relation within a type stays directed)")
	threads := fs.Int("threads", 0, "worker threads (0 = all cores)")
	norm := fs.Bool("normalize-features", false, "scale each vertex's feature row to sum 1 (usual for bag-of-words features)")
	dtype := storedDType(fs)
	force := replaceFlag(fs)
	link := addLinkSplitFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fanout import ogb SRC --out DIR [--symmetrize]\n       fanout import planetoid SRC --name cora --out DIR\n       fanout import npz FILE --out DIR [--seed N] [--train-per-class N] [--valid N] [--test N]\n       fanout import graphbolt DIR --out DIR [--feature feat] [--task NAME] [--directed]\n       (ogb and graphbolt, typed datasets: [--target TYPE] [--no-reverse])\n       fanout import edges FILE|GLOB... --nodes FILE --out DIR (fanout import edges -h: its flags)\n       (any of them: [--feature-dtype bfloat16] [--normalize-features] [--link-split TRAIN,VALID,TEST] [--force])")
		fs.PrintDefaults()
	}
	pos, err := parseOut(fs, args, 2, out, threads)
	if err != nil {
		return err
	}
	if err := checkSplitSizes(fs, pos[0], opts.TrainPerClass, opts.Valid, opts.Test); err != nil {
		return err
	}
	if _, err := job.ParseFeatureDType(*dtype); err != nil {
		return err
	}
	linkOpts, err := link.options()
	if err != nil {
		return err
	}
	if err := job.CheckTarget(*out, *force); err != nil {
		return err
	}
	if pos[0] == "ogb" && !flagSet(fs, "symmetrize") {
		n := *name
		if n == "" {
			n = filepath.Base(filepath.Clean(pos[1]))
		}
		*sym = ogb.AddInverseEdge(n)
	}
	start := time.Now()
	bar := newProgress(stderr, "importing")
	ds, err := job.WhileRunning(ctx, func() (*dataset.Dataset, error) {
		return job.ImportFormat(pos[0], pos[1], job.ImportOptions{Name: *name, Symmetrize: *sym, Split: opts, GraphBolt: gb, Threads: *threads, Progress: bar.update,
			Target: *target, NoReverse: *noReverse})
	})
	bar.done()
	return finishImport(ctx, ds, err, job.Store{Out: *out, Src: pos[1], Normalize: *norm, DType: *dtype, Link: linkOpts}, start, stdout, stderr)
}

// finishImport stores an imported dataset (job.StoreDataset) and says what
// it wrote.
func finishImport(ctx context.Context, ds *dataset.Dataset, err error, s job.Store, start time.Time, stdout, stderr io.Writer) error {
	if err != nil && ctx.Err() == nil {
		return err
	}
	st, err := job.StoreDataset(ctx, ds, s, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s to %s: %d vertices, %d edges, %d/%d/%d train/valid/test%s, %s (%s)\n", ds.Name, s.Out,
		ds.NumVertices(), ds.NumEdges(), len(ds.Train), len(ds.Valid), len(ds.Test), st.Link, st.Features, time.Since(start).Round(time.Millisecond))
	return nil
}

// checkSplitSizes checks import's split flags: at least 1 each, and only for
// npz, whose split import draws.
func checkSplitSizes(fs *flag.FlagSet, format string, perClass, valid, test int) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"train-per-class", perClass}, {"valid", valid}, {"test", test}} {
		if f.v < 1 {
			return fmt.Errorf("--%s %d: want at least 1", f.name, f.v)
		}
		if format != "npz" && flagSet(fs, f.name) {
			return fmt.Errorf("--%s: only npz archives are split here (%s data come with their split)", f.name, format)
		}
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/npz"
	"github.com/fanout-gnn/fanout/dataset/ogb"
	"github.com/fanout-gnn/fanout/dataset/planetoid"
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
	var opts npz.Options
	splitFlags(fs, &opts)
	var gb graphbolt.Options
	fs.StringVar(&gb.Feature, "feature", "feat", "graphbolt: the node feature_data entry of the features")
	fs.StringVar(&gb.Task, "task", "", "graphbolt: the task whose sets and labels are imported (default: the first)")
	fs.BoolVar(&gb.Directed, "directed", false, "graphbolt: keep the edges' direction (default: symmetrize)")
	threads := fs.Int("threads", 0, "worker threads (0 = all cores)")
	norm := fs.Bool("normalize-features", false, "scale each vertex's feature row to sum 1 (usual for bag-of-words features)")
	dtype := storedDType(fs)
	force := replaceFlag(fs)
	link := addLinkSplitFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fanout import ogb SRC --out DIR [--symmetrize]\n       fanout import planetoid SRC --name cora --out DIR\n       fanout import npz FILE --out DIR [--seed N] [--train-per-class N] [--valid N] [--test N]\n       fanout import graphbolt DIR --out DIR [--feature feat] [--task NAME] [--directed]\n       fanout import edges FILE|GLOB... --nodes FILE --out DIR (fanout import edges -h: its flags)\n       (any of them: [--feature-dtype bfloat16] [--normalize-features] [--link-split TRAIN,VALID,TEST] [--force])")
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		fs.Usage()
		return errUsage
	}
	if *out == "" {
		return errors.New("--out DIR is required")
	}
	if err := job.CheckThreads(*threads); err != nil {
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
	ds, err := job.WhileRunning(ctx, func() (*dataset.Dataset, error) {
		if pos[0] == "graphbolt" {
			gb.Threads = *threads
			return graphbolt.Import(pos[1], gb)
		}
		return importData(pos[0], pos[1], *name, *sym, opts, *threads, stderr)
	})
	return finishImport(ctx, importResult{ds: ds, err: err, src: pos[1], out: *out, norm: *norm, dtype: *dtype, start: start, link: linkOpts}, stdout, stderr)
}

// importData reads the dataset of format at src.
func importData(format, src, name string, sym bool, opts npz.Options, threads int, stderr io.Writer) (ds *dataset.Dataset, err error) {
	switch format {
	case "ogb":
		bar := newProgress(stderr, "importing")
		ds, err = ogb.Import(src, ogb.Options{Name: name, Symmetrize: sym, Threads: threads, Progress: bar.update})
		bar.done()
	case "planetoid":
		if name == "" {
			return nil, errors.New("planetoid: --name is required (cora, citeseer or pubmed)")
		}
		ds, err = planetoid.Import(src, name)
	case "npz":
		ds, err = npz.Import(src, opts)
		if errors.Is(err, npz.ErrSplitTooLarge) {
			err = fmt.Errorf("%w (--train-per-class, --valid, --test)", err)
		}
	default:
		return nil, fmt.Errorf("unknown format %s: want ogb, planetoid, npz, graphbolt or edges", quoted(format))
	}
	return ds, err
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

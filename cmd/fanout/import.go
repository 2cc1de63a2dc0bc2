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
	"github.com/fanout-gnn/fanout/dataset/npz"
	"github.com/fanout-gnn/fanout/dataset/ogb"
	"github.com/fanout-gnn/fanout/dataset/planetoid"
)

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import", stderr)
	out := fs.String("out", "", "output dataset directory (required)")
	name := fs.String("name", "", "dataset name (planetoid: cora, citeseer or pubmed; ogb: a name for the manifest)")
	sym := fs.Bool("symmetrize", false, "ogb: add inverse edges (default: OGB's add_inverse_edge for the dataset, true for products)")
	seed := fs.Uint64("seed", 1, "npz: seed of the per-class split")
	perClass := fs.Int("train-per-class", npz.DefaultTrainPerClass, "npz: training vertices drawn per class")
	nValid := fs.Int("valid", npz.DefaultValid, "npz: validation vertices")
	nTest := fs.Int("test", npz.DefaultTest, "npz: test vertices")
	threads := fs.Int("threads", 0, "worker threads (0 = all cores)")
	norm := fs.Bool("normalize-features", false, "scale each vertex's feature row to sum 1 (usual for bag-of-words features)")
	dtype := storedDType(fs)
	force := replaceFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fanout import ogb SRC --out DIR [--symmetrize]\n       fanout import planetoid SRC --name cora --out DIR\n       fanout import npz FILE --out DIR [--seed N] [--train-per-class N] [--valid N] [--test N]\n       (any of them: [--feature-dtype bfloat16] [--normalize-features] [--force])")
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
	if err := checkThreads(*threads); err != nil {
		return err
	}
	if err := checkSplitSizes(fs, pos[0], *perClass, *nValid, *nTest); err != nil {
		return err
	}
	if _, err := parseFeatureDType(*dtype); err != nil {
		return err
	}
	if err := checkOut(*out, *force); err != nil {
		return err
	}
	if pos[0] == "ogb" && !flagSet(fs, "symmetrize") {
		n := *name
		if n == "" {
			n = filepath.Base(filepath.Clean(pos[1]))
		}
		*sym = ogb.AddInverseEdge(n)
	}
	opts := npz.Options{Seed: *seed, TrainPerClass: *perClass, Valid: *nValid, Test: *nTest}
	start := time.Now()
	ds, err := whileRunning(ctx, func() (*dataset.Dataset, error) {
		return importData(pos[0], pos[1], *name, *sym, opts, *threads, stderr)
	})
	if ctx.Err() != nil {
		return interruptedWrite(ctx, *out, stderr)
	}
	if err != nil {
		return err
	}
	if err := dataset.CheckFeatures(ds.Features, ds.FeatDim); err != nil {
		return fmt.Errorf("%s: features: %w", pos[1], err)
	}
	if *norm {
		ds.NormalizeFeatures()
	}
	feat, err := storeAs(ds, *dtype)
	if err != nil {
		return err
	}
	if err := writeDataset(ctx, *out, ds, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s to %s: %d vertices, %d edges, %d/%d/%d train/valid/test, %s (%s)\n", ds.Name, *out,
		ds.Graph.NumNodes, ds.Graph.NumEdges(), len(ds.Train), len(ds.Valid), len(ds.Test), feat, time.Since(start).Round(time.Millisecond))
	return nil
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
		return nil, fmt.Errorf("unknown format %s: want ogb, planetoid or npz", quoted(format))
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

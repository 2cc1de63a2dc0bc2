package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train/job"
)

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", stderr)
	out := fs.String("out", "", "output dataset directory (required)")
	seed := fs.Uint64("seed", 1, "generator seed")
	threads := fs.Int("threads", 0, "worker threads (0 = all cores)")
	dtype := storedDType(fs)
	force := replaceFlag(fs)
	link := addLinkSplitFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fanout gen PRESET --out DIR [--seed N] [--feature-dtype bfloat16] [--link-split TRAIN,VALID,TEST] [--force]\npresets: %s\n", presetNames())
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	if *out == "" {
		return errors.New("--out DIR is required")
	}
	if err := job.CheckThreads(*threads); err != nil {
		return err
	}
	if _, err := job.ParseFeatureDType(*dtype); err != nil {
		return err
	}
	linkOpts, err := link.options()
	if err != nil {
		return err
	}
	p, err := rmat.Lookup(pos[0])
	if err != nil {
		return err
	}
	if err := job.CheckTarget(*out, *force); err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(stderr, "generating %s: %d vertices, %d vertex pairs\n", p.Name, p.NumNodes(), p.Pairs)
	bar := newProgress(stderr, "generating "+p.Name)
	ds, err := job.WhileRunning(ctx, func() (*dataset.Dataset, error) {
		return rmat.Generate(p, rmat.Options{Seed: *seed, Threads: *threads, Progress: bar.update})
	})
	bar.done()
	if ctx.Err() != nil {
		return job.InterruptedWrite(*out, stderr)
	}
	if err != nil {
		return err
	}
	gen := time.Since(start)
	st, err := job.StoreDataset(ctx, ds, job.Store{Out: *out, DType: *dtype, Link: linkOpts}, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s to %s: %d vertices, %d edges%s, %s (generated in %s, written in %s)\n", p.Name, *out,
		ds.Graph.NumNodes, ds.Graph.NumEdges(), st.Link, st.Features, gen.Round(time.Millisecond), (time.Since(start) - gen).Round(time.Millisecond))
	return nil
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", stderr)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: fanout info DIR")
		return errUsage
	}
	ds, err := dataset.Open(pos[0])
	if err != nil {
		return err
	}
	defer ds.Close()
	fmt.Fprint(stdout, ds.Info().String())
	return nil
}

// replaceFlag is gen's and import's --force.
func replaceFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("force", false, "replace the dataset already in --out")
}

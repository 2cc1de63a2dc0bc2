package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
)

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", stderr)
	out := fs.String("out", "", "output dataset directory (required)")
	seed := fs.Uint64("seed", 1, "generator seed")
	threads := fs.Int("threads", 0, "worker threads (0 = all cores)")
	dtype := storedDType(fs)
	force := replaceFlag(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fanout gen PRESET --out DIR [--seed N] [--feature-dtype bfloat16] [--force]\npresets: %s\n", presetNames())
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
	if err := checkThreads(*threads); err != nil {
		return err
	}
	if _, err := parseFeatureDType(*dtype); err != nil {
		return err
	}
	p, err := rmat.Lookup(pos[0])
	if err != nil {
		return err
	}
	if err := checkOut(*out, *force); err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(stderr, "generating %s: %d vertices, %d vertex pairs\n", p.Name, p.NumNodes(), p.Pairs)
	bar := newProgress(stderr, "generating "+p.Name)
	ds, err := whileRunning(ctx, func() (*dataset.Dataset, error) {
		return rmat.Generate(p, rmat.Options{Seed: *seed, Threads: *threads, Progress: bar.update})
	})
	bar.done()
	if ctx.Err() != nil {
		return interruptedWrite(ctx, *out, stderr)
	}
	if err != nil {
		return err
	}
	gen := time.Since(start)
	feat, err := storeAs(ds, *dtype)
	if err != nil {
		return err
	}
	if err := writeDataset(ctx, *out, ds, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s to %s: %d vertices, %d edges, %s (generated in %s, written in %s)\n", p.Name, *out,
		ds.Graph.NumNodes, ds.Graph.NumEdges(), feat, gen.Round(time.Millisecond), (time.Since(start) - gen).Round(time.Millisecond))
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

// checkOut checks --out before any work: a dataset there is replaced only
// with --force, and anything else there is refused.
func checkOut(out string, force bool) error {
	holds, err := dataset.CheckTarget(out)
	if err != nil {
		return err
	}
	if holds && !force {
		return fmt.Errorf("%s already holds a dataset; pass --force to replace it, or choose another --out", out)
	}
	return nil
}

// whileRunning runs f in a goroutine of its own and returns its result, or
// ctx's error as soon as ctx is done: f, which cannot be stopped, is left
// to the process's exit (a generator or an importer, which writes
// nothing).
func whileRunning[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// writeDataset writes ds to out for gen and import: it says which
// temporary folders of an earlier, killed write of out it removed, and,
// when ctx is done (Ctrl-C, SIGTERM), removes what it wrote and ends the
// command with the signal's status.
func writeDataset(ctx context.Context, out string, ds *dataset.Dataset, stderr io.Writer) error {
	stale, err := dataset.WriteContext(ctx, out, ds)
	if len(stale) > 0 {
		fmt.Fprintf(stderr, "removed %d temporary folder(s) that an interrupted write of %s left: %s\n", len(stale), out, strings.Join(stale, ", "))
	}
	if ctx.Err() != nil {
		return interruptedWrite(ctx, out, stderr)
	}
	return err
}

// interruptedWrite says that nothing was written to out and returns the
// exit status of the signal that stopped the command.
func interruptedWrite(ctx context.Context, out string, stderr io.Writer) error {
	fmt.Fprintf(stderr, "interrupted: nothing written to %s (its temporary folder removed)\n", out)
	return interruptStatus(ctx)
}

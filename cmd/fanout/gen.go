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
	labels := fs.String("labels", rmat.LabelsNeighbours, "tiny, products-sim, papers-sim: "+rmat.LabelsNeighbours+
		" (an R-MAT graph, a vertex's label read from its neighbours' types) or "+rmat.LabelsCommunity+
		" (a planted partition of the same size, a vertex's label its community); the typed presets' are communities")
	noReverse := fs.Bool("no-reverse", false, "typed presets: leave out the reverse relations (rev_<name>; a relation within a type stays directed)")
	var v rmat.Variant
	fs.Float64Var(&v.Scale, "scale", 0, "typed presets: the share in (0, 1] of the preset's source graph to generate, every type's vertices, "+
		"every relation's edges and the split multiplied by it (0: the preset's own, igbh-sim's 0.1 of IGB-H medium)")
	featDim := fs.Int("feat-dim", 0, "graphs of one type: the features' width instead of the preset's (e.g. papers-sim at 640 is 43 GB of float32 features)")
	fs.IntVar(&v.Classes, "classes", 0, "typed presets: the number of planted communities, the target's classes (0: the preset's; igbh-sim 19, or IGB's 2983)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fanout gen PRESET --out DIR [--seed N] [--labels community] [--no-reverse] [--scale F] [--classes N] [--feat-dim N] [--feature-dtype bfloat16] [--link-split TRAIN,VALID,TEST] [--force]\npresets: %s\n", presetNames())
		fs.PrintDefaults()
	}
	pos, err := parseOut(fs, args, 1, out, threads)
	if err != nil {
		return err
	}
	if _, err := job.ParseFeatureDType(*dtype); err != nil {
		return err
	}
	linkOpts, err := link.options()
	if err != nil {
		return err
	}
	p, err := genPreset(fs, pos[0], v)
	if err != nil {
		return err
	}
	if err := checkGenFlags(fs, p, *labels, linkOpts != nil); err != nil {
		return err
	}
	if flagSet(fs, "feat-dim") {
		if p.Schema != nil || *featDim < 1 {
			return fmt.Errorf("--feat-dim %d: want a width of at least 1 for a preset of one type (%s's types have widths of their own)", *featDim, p.Name)
		}
		p.FeatDim = *featDim
	}
	if err := job.CheckTarget(*out, *force); err != nil {
		return err
	}
	start := time.Now()
	if p.Schema != nil {
		fmt.Fprintf(stderr, "generating %s (%s, %d classes): %d vertices of %d types, %d edges in %d relations (their reverses besides), about %s on disk\n",
			p.Name, p.Share(), p.Classes, p.NumNodes(), len(p.Schema.Types), p.NumPairs(), len(p.Schema.Relations), genSize(p, *dtype))
	} else {
		fmt.Fprintf(stderr, "generating %s: %d vertices, %d vertex pairs\n", p.Name, p.NumNodes(), p.Pairs)
	}
	bar := newProgress(stderr, "generating "+p.Name)
	ds, err := job.WhileRunning(ctx, func() (*dataset.Dataset, error) {
		o := rmat.Options{Seed: *seed, Threads: *threads, Progress: bar.update, Labels: *labels, NoReverse: *noReverse}
		if p.Schema != nil && !flagSet(fs, "labels") {
			o.Labels = "" // a typed preset's labels are its communities
		}
		return rmat.Generate(p, o)
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
	name := p.Name
	if p.Factor != 0 && p.Factor != 1 {
		name += " (" + p.Share() + ")"
	}
	fmt.Fprintf(stdout, "wrote %s to %s: %d vertices, %d edges%s, %s (generated in %s, written in %s)\n", name, *out,
		ds.NumVertices(), ds.NumEdges(), st.Link, st.Features, gen.Round(time.Millisecond), (time.Since(start) - gen).Round(time.Millisecond))
	return nil
}

// genPreset looks up gen's preset with --scale and --classes, refusing a
// value, or a flag the preset does not take, in one line naming the flag.
func genPreset(fs *flag.FlagSet, name string, v rmat.Variant) (rmat.Preset, error) {
	if _, err := rmat.Lookup(name); err != nil {
		return rmat.Preset{}, err
	}
	for _, f := range []struct {
		flag  string
		zero  bool
		alone rmat.Variant
	}{{"scale", v.Scale == 0, rmat.Variant{Scale: v.Scale}}, {"classes", v.Classes == 0, rmat.Variant{Classes: v.Classes}}} {
		if !flagSet(fs, f.flag) {
			continue
		}
		if f.zero {
			return rmat.Preset{}, fmt.Errorf("--%s 0: give a value, or leave the flag out for the preset's own", f.flag)
		}
		if _, err := rmat.LookupVariant(name, f.alone); err != nil {
			return rmat.Preset{}, fmt.Errorf("--%s: %w", f.flag, err)
		}
	}
	return rmat.LookupVariant(name, v)
}

// genSize is about the size of p's dataset on disk with features of the
// stored type ("bfloat16": 2 bytes an entry; float32 otherwise).
func genSize(p rmat.Preset, dtype string) string {
	b := 4
	if dtype == dataset.DTypeBFloat16 {
		b = 2
	}
	return fmt.Sprintf("%.1f GB", float64(p.EstimatedBytes(b))/1e9)
}

// checkGenFlags refuses gen's flags that the preset p does not take:
// --labels other than the known schemes, or neighbours for a typed
// preset; --no-reverse and --link-split for a one-type or a typed preset.
func checkGenFlags(fs *flag.FlagSet, p rmat.Preset, labels string, link bool) error {
	switch {
	case labels != rmat.LabelsNeighbours && labels != rmat.LabelsCommunity:
		return fmt.Errorf("--labels %s: want %s or %s", quoted(labels), rmat.LabelsNeighbours, rmat.LabelsCommunity)
	case p.Schema != nil && flagSet(fs, "labels") && labels != rmat.LabelsCommunity:
		return fmt.Errorf("--labels %s: %s is a typed preset, whose labels are its planted communities", labels, p.Name)
	case p.Schema == nil && flagSet(fs, "no-reverse"):
		return fmt.Errorf("--no-reverse: %s is a graph of one type, without relations to reverse", p.Name)
	case p.Schema != nil && link:
		return fmt.Errorf("--link-split: %s is a typed preset; link prediction over relations is not built yet", p.Name)
	}
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

// parseOut parses the flags of gen and import, which write a dataset to
// --out, wanting npos positional arguments, and checks --out and
// --threads.
func parseOut(fs *flag.FlagSet, args []string, npos int, out *string, threads *int) ([]string, error) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != npos {
		fs.Usage()
		return nil, errUsage
	}
	if *out == "" {
		return nil, errors.New("--out DIR is required")
	}
	return pos, job.CheckThreads(*threads)
}

// replaceFlag is gen's and import's --force.
func replaceFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("force", false, "replace the dataset already in --out")
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/edgelist"
	"github.com/fanout-gnn/fanout/train/job"
)

// repeated is a flag given once per value.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// typedImport is `fanout import edges` with types: its flags as parsed.
type typedImport struct {
	fs                      *flag.FlagSet
	out                     string
	o                       edgelist.Options
	nodes, relations, files []string
	target, features        string
	memory, dtype, weight   string
	noReverse, norm, force  bool
}

// checkUntyped refuses the typed flags without --edges: one --nodes FILE.
func checkUntyped(nodes []string, target string, noReverse bool) error {
	switch {
	case len(nodes) > 1 || (len(nodes) == 1 && strings.Contains(nodes[0], "=") && !strings.ContainsAny(strings.SplitN(nodes[0], "=", 2)[0], `/\.`)):
		return fmt.Errorf("--nodes %s: a typed import (--nodes TYPE=FILE) names its relations with --edges SRC,REL,DST=FILE", quoted(strings.Join(nodes, " ")))
	case target != "" || noReverse:
		return errors.New("--target and --no-reverse: for a typed import, whose relations --edges SRC,REL,DST=FILE names")
	}
	return nil
}

// runImportTyped is `fanout import edges --nodes TYPE=FILE... --edges
// SRC,REL,DST=FILE...`: node tables and edge files of several types into a
// typed dataset (edgelist.ImportTyped).
func runImportTyped(ctx context.Context, ti typedImport, stdout, stderr io.Writer) error {
	to, err := ti.options(stderr)
	if err != nil {
		return err
	}
	if err := job.CheckTarget(ti.out, ti.force); err != nil {
		return err
	}
	start := time.Now()
	ds, done, err := job.ImportTypedEdges(ctx, to, stderr)
	defer done()
	if errors.Is(err, dataset.ErrSplitTooLarge) {
		err = fmt.Errorf("%w (--train-per-class, --valid, --test, or a --split column)", err)
	}
	return finishImport(ctx, ds, err, job.Store{Out: ti.out, Src: to.Tables[0].File, Normalize: ti.norm, DType: ti.dtype}, start, stdout, stderr)
}

// options checks the typed import's flags and turns them into options.
func (ti typedImport) options(stderr io.Writer) (edgelist.TypedOptions, error) {
	to := edgelist.TypedOptions{Options: ti.o, Target: ti.target, NoReverse: ti.noReverse}
	switch {
	case len(ti.files) > 0:
		return to, fmt.Errorf("%s: a typed import reads the edge files of --edges SRC,REL,DST=FILE, not positional files", quoted(ti.files[0]))
	case ti.target == "":
		return to, errors.New("--target TYPE is required: the labelled type, whose table has the --label column")
	case ti.o.Directed:
		return to, errors.New("--directed: typed relations keep their direction, and get their reverses unless --no-reverse")
	}
	if err := checkImportEdges(ti.fs, ti.out, to.Options, ti.weight); err != nil {
		return to, err
	}
	for _, n := range ti.nodes {
		typ, file, ok := strings.Cut(n, "=")
		if !ok || typ == "" || file == "" {
			return to, fmt.Errorf("--nodes %s: want TYPE=FILE in a typed import", quoted(n))
		}
		to.Tables = append(to.Tables, edgelist.NodeTable{Type: typ, File: file})
	}
	for _, r := range ti.relations {
		rel, err := parseRelation(r)
		if err != nil {
			return to, err
		}
		to.Relations = append(to.Relations, rel)
	}
	if to.Name == "" {
		to.Name = filepath.Base(filepath.Clean(ti.out))
	}
	if ti.features != "" {
		to.Features = strings.Split(ti.features, ",")
	}
	if _, err := job.ParseFeatureDType(ti.dtype); err != nil {
		return to, err
	}
	return to, memoryBudget(&to.Options, ti.memory, ti.out, stderr)
}

// parseRelation reads an --edges value, SRC,REL,DST=FILE|GLOB.
func parseRelation(v string) (edgelist.EdgeFiles, error) {
	triple, pattern, ok := strings.Cut(v, "=")
	names := strings.Split(triple, ",")
	if !ok || len(names) != 3 || pattern == "" {
		return edgelist.EdgeFiles{}, fmt.Errorf("--edges %s: want SRC,REL,DST=FILE", quoted(v))
	}
	files, err := edgelist.Expand([]string{pattern})
	if err != nil {
		return edgelist.EdgeFiles{}, fmt.Errorf("--edges %s: %w", quoted(v), err)
	}
	return edgelist.EdgeFiles{Src: names[0], Name: names[1], Dst: names[2], Files: files}, nil
}

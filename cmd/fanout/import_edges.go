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

// importEdgesUsage is the usage line of `fanout import edges`.
const importEdgesUsage = `usage: fanout import edges FILE|GLOB... --nodes FILE --out DIR [--src COL] [--dst COL] [--id COL] [--label COL]
       [--features COLS] [--split COL|TRAIN,VALID,TEST | --seed N --train-per-class N --valid N --test N] [--directed] [--memory SIZE]
       typed: fanout import edges --nodes TYPE=FILE... --edges SRC,REL,DST=FILE|GLOB... --target TYPE --out DIR [--no-reverse] [as above]
       edges: CSV or TSV with a header line (optionally gzip), or Parquet; the node table likewise, one row per vertex`

// runImportEdges is `fanout import edges`: an edge list and a node table
// (package edgelist) into a dataset that keeps the original ids.
func runImportEdges(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import edges", stderr)
	out := fs.String("out", "", "output dataset directory (required)")
	o := edgelist.Options{}
	fs.StringVar(&o.Name, "name", "", "dataset name (default: the name of --out)")
	fs.StringVar(&o.Src, "src", "src", "the edge files' column of source ids")
	fs.StringVar(&o.Dst, "dst", "dst", "the edge files' column of destination ids")
	weight := fs.String("weight", "", "a column of edge weights: refused, a fanout dataset's graph is unweighted")
	var nodes, relations repeated
	fs.Var(&nodes, "nodes", "the node table, CSV or Parquet, one row per vertex; or .npy features in id order, the edges' ids being their rows (required); typed: TYPE=FILE, once per vertex type")
	fs.Var(&relations, "edges", "typed: SRC,REL,DST=FILE|GLOB, once per relation: its edges' --src column holds SRC's ids, --dst DST's")
	target := fs.String("target", "", "typed: the labelled vertex type, to which --label and --split apply")
	noReverse := fs.Bool("no-reverse", false, "typed: leave out the reverse relations (rev_<name>; a relation within a type stays directed)")
	fs.StringVar(&o.ID, "id", "id", "the node table's column of vertex ids (integers or strings; edges use the same ids)")
	fs.StringVar(&o.Label, "label", "label", "the node table's column of class ids (-1, empty or NaN: unlabelled); with .npy features, a .npy file of them")
	features := fs.String("features", "", "the node table's feature columns, comma-separated, scalars or lists (default: every other numeric column)")
	fs.StringVar(&o.Split, "split", "", "the node table's column of train, valid, test or none, or its three mask columns TRAIN,VALID,TEST (default: a per-class split drawn as import npz draws it)")
	splitFlags(fs, &o.Draw)
	fs.BoolVar(&o.Directed, "directed", false, "keep the edges' direction (row v lists the sources of the edges into v); default: symmetrize")
	fs.IntVar(&o.Threads, "threads", 0, "graph building threads (0 = all cores)")
	memory := fs.String("memory", "", "hold the edges within this budget (e.g. 2GiB): sorted runs on disk beside --out, merged into the graph; default: in memory")
	norm := fs.Bool("normalize-features", false, "scale each vertex's feature row to sum 1")
	dtype := storedDType(fs)
	force := replaceFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, importEdgesUsage)
		fs.PrintDefaults()
	}
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(relations) > 0 {
		return runImportTyped(ctx, typedImport{fs: fs, out: *out, o: o, nodes: nodes, relations: relations, files: files, target: *target,
			noReverse: *noReverse, features: *features, memory: *memory, norm: *norm, dtype: *dtype, force: *force, weight: *weight}, stdout, stderr)
	}
	if err := checkUntyped(nodes, *target, *noReverse); err != nil {
		return err
	}
	if len(nodes) == 1 {
		o.Nodes = nodes[0]
	}
	if len(files) == 0 {
		fs.Usage()
		return errUsage
	}
	if *out != "" && o.Nodes == "" {
		return errors.New("--nodes FILE is required: the node table gives every vertex its features and label")
	}
	if err := checkImportEdges(fs, *out, o, *weight); err != nil {
		return err
	}
	if err := edgeOptions(&o, *out, *features, *dtype, *memory, stderr); err != nil {
		return err
	}
	if err := job.CheckTarget(*out, *force); err != nil {
		return err
	}
	if files, err = edgelist.Expand(files); err != nil {
		return err
	}
	return storeEdges(ctx, func() (*dataset.Dataset, func(), error) { return job.ImportEdges(ctx, files, o, stderr) },
		job.Store{Out: *out, Src: o.Nodes, Normalize: *norm, DType: *dtype}, stdout, stderr)
}

// edgeOptions sets what an edge import takes alike with types and without:
// the dataset's name (default: the name of out), the feature columns
// (features, comma-separated), the stored dtype checked and the memory
// budget (memoryBudget).
func edgeOptions(o *edgelist.Options, out, features, dtype, memory string, stderr io.Writer) error {
	if o.Name == "" {
		o.Name = filepath.Base(filepath.Clean(out))
	}
	if features != "" {
		o.Features = strings.Split(features, ",")
	}
	if _, err := job.ParseFeatureDType(dtype); err != nil {
		return err
	}
	return memoryBudget(o, memory, out, stderr)
}

// storeEdges runs an edge import (job.ImportEdges or job.ImportTypedEdges)
// and stores what it read as s says (finishImport); a split too large for
// the data names the flags that draw or give it.
func storeEdges(ctx context.Context, imp func() (*dataset.Dataset, func(), error), s job.Store, stdout, stderr io.Writer) error {
	start := time.Now()
	ds, done, err := imp()
	defer done()
	if errors.Is(err, dataset.ErrSplitTooLarge) {
		err = fmt.Errorf("%w (--train-per-class, --valid, --test, or a --split column)", err)
	}
	return finishImport(ctx, ds, err, s, start, stdout, stderr)
}

// memoryBudget sets o's budget from --memory (none where memory is
// empty), its scratch beside out and its progress lines on stderr.
func memoryBudget(o *edgelist.Options, memory, out string, stderr io.Writer) (err error) {
	if memory == "" {
		return nil
	}
	if o.Memory, err = job.ParseSize(memory); err != nil {
		return fmt.Errorf("--memory: %w", err)
	}
	if o.Memory < edgelist.MinMemory {
		return fmt.Errorf("--memory %s: at least %d KiB", quoted(memory), edgelist.MinMemory>>10)
	}
	o.TempDir = filepath.Dir(filepath.Clean(out)) // the same disk as the dataset
	o.Progress = edgelist.ProgressPrinter(stderr, 10*time.Second)
	return nil
}

// splitFlags are import's flags of a drawn per-class split (dataset.Split).
func splitFlags(fs *flag.FlagSet, o *dataset.SplitOptions) {
	fs.Uint64Var(&o.Seed, "seed", 1, "npz, edges: seed of the per-class split")
	fs.IntVar(&o.TrainPerClass, "train-per-class", dataset.DefaultTrainPerClass, "npz, edges: training vertices drawn per class")
	fs.IntVar(&o.Valid, "valid", dataset.DefaultValid, "npz, edges: validation vertices")
	fs.IntVar(&o.Test, "test", dataset.DefaultTest, "npz, edges: test vertices")
}

// checkImportEdges checks import edges' flags before any work.
func checkImportEdges(fs *flag.FlagSet, out string, o edgelist.Options, weight string) error {
	switch {
	case out == "":
		return errors.New("--out DIR is required")
	case weight != "":
		return fmt.Errorf("--weight %s: a fanout dataset's graph is unweighted, so edge weights cannot be kept; import without --weight", weight)
	case o.Src == o.Dst:
		return fmt.Errorf("--src and --dst both name %s", quoted(o.Src))
	}
	if err := job.CheckThreads(o.Threads); err != nil {
		return err
	}
	for _, name := range []string{"seed", "train-per-class", "valid", "test"} {
		if o.Split != "" && flagSet(fs, name) {
			return fmt.Errorf("--%s draws a split, but --split %s names a split column: give one of the two", name, o.Split)
		}
	}
	return checkSplitSizes(fs, "npz", o.Draw.TrainPerClass, o.Draw.Valid, o.Draw.Test)
}

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
	return storeEdges(ctx, func() (*dataset.Dataset, func(), error) { return job.ImportTypedEdges(ctx, to, stderr) },
		job.Store{Out: ti.out, Src: to.Tables[0].File, Normalize: ti.norm, DType: ti.dtype}, stdout, stderr)
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
	return to, edgeOptions(&to.Options, ti.out, ti.features, ti.dtype, ti.memory, stderr)
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

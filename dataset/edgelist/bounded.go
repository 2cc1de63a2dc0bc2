package edgelist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/parallel"
)

// MinMemory is the smallest budget ImportBounded takes (Options.Memory).
const MinMemory = 64 << 10

// Imported is ImportBounded's dataset, whose graph is mapped from its
// scratch directory: write it (dataset.Write), then Close it.
type Imported struct {
	Dataset *dataset.Dataset
	Stats   Stats
	scratch *scratch
	maps    []*mapped
}

// Stats tells what ImportBounded did (a typed import: summed over its
// graphs).
type Stats struct {
	Edges  int64 // edge rows read
	Keys   int64 // graph entries sorted: self loops dropped, both directions unless directed
	Runs   int   // sorted runs written to disk (0: the edges fitted the budget)
	Passes int   // merge passes before the last one (0: the runs were merged in one)
	// ScratchPeak is the most bytes the scratch directory held at once.
	ScratchPeak int64
	// Stale names the scratch directories of killed imports removed first.
	Stale []string
}

// Close unmaps the graph (a typed import's graphs) and removes the scratch
// directory. The dataset's graphs must not be used afterwards.
func (im *Imported) Close() error {
	var errs []error
	for _, m := range im.maps {
		errs = append(errs, m.unmap())
	}
	im.maps = nil
	if im.Dataset != nil {
		for _, r := range im.Dataset.EdgeTypes() {
			if r.Graph != nil {
				r.Graph.Indptr, r.Graph.Indices = nil, nil
			}
		}
	}
	if im.scratch != nil {
		errs = append(errs, im.scratch.remove())
		im.scratch = nil
	}
	return errors.Join(errs...)
}

// DiskNeeded is an upper bound on the bytes of ImportBounded's scratch
// directory for an edge list of that many edges (rows) and vertices:
// the sorted runs (8 bytes per entry, an entry per edge, two unless
// directed) and, beside them while the last pass merges, the graph (4
// bytes per entry and 8 per vertex), or a second copy of the runs where
// they take more than one pass. Writing the dataset takes the graph's
// bytes and the features' again, beside it.
func DiskNeeded(edges, vertices int64, o Options) int64 {
	keys := edges
	if !o.Directed {
		keys *= 2
	}
	runs := keys * keyBytes
	csr := keys*4 + (vertices+1)*8
	arena := max(o.Memory, MinMemory) / keyBytes
	spills := (keys + arena - 1) / arena
	if spills*int64(parallel.Threads(o.Threads)) > int64(fanIn(arena)) {
		return runs + max(runs, csr)
	}
	return runs + csr
}

// ImportBounded is Import holding the edges within o.Memory bytes: edges
// fill a buffer of keys; a full buffer is sorted, its repeats dropped, and
// written as runs to a scratch directory under o.TempDir; the runs are
// merged (in several passes where there are too many for the budget) into
// the graph's files, which are mapped. What it holds in memory beyond the
// budget is what Import holds of the node table, and the write buffers.
// A scratch directory left by an import that was killed is removed first;
// on error its own is removed. ctx stops it between rows and keys.
func ImportBounded(ctx context.Context, files []string, o Options) (_ *Imported, err error) {
	if o.Memory < MinMemory {
		return nil, fmt.Errorf("a memory budget of %d bytes is below the least, %d", o.Memory, MinMemory)
	}
	total, err := filesSize(files)
	if err != nil {
		return nil, err
	}
	nd, err := readNodes(specOf(o))
	if err != nil {
		return nil, err
	}
	n := nd.ids.len()
	im, err := inBudget(o, func(b *bounded) error {
		b.shape = keyShape{dropLoops: true, forward: true, backward: !o.Directed}
		if err := b.read(ctx, files, oneTable(nd.ids, o.Nodes), total); err != nil {
			return err
		}
		return b.build(ctx, n)
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			im.Close()
		}
	}()
	g, err := im.mapGraph(im.scratch.dir, n)
	if err != nil {
		return nil, err
	}
	if im.Dataset, err = assemble(g, nd, files, o); err != nil {
		return nil, err
	}
	return im, nil
}

// startBounded makes a bounded import's scratch directory (removing what
// killed imports left beside it) and its budget's arena: the import's
// state, whose runs go to the scratch directory, and the function that
// gives the arena back. On error nothing is left behind.
func startBounded(o Options) (_ *bounded, free func() error, err error) {
	if o.Memory < MinMemory {
		return nil, nil, fmt.Errorf("a memory budget of %d bytes is below the least, %d", o.Memory, MinMemory)
	}
	sc, stale, err := newScratch(o.TempDir)
	if err != nil {
		return nil, nil, err
	}
	im := &Imported{scratch: sc, Stats: Stats{Stale: stale}}
	arena, free, err := allocKeys(o.Memory / keyBytes)
	if err != nil {
		im.Close()
		return nil, nil, err
	}
	return &bounded{o: o, im: im, runs: &runSet{dir: sc.dir}, arena: arena, threads: parallel.Threads(o.Threads), tr: newTracker(o.Progress)}, free, nil
}

// inBudget starts a bounded import (startBounded), runs fill on its state
// and gives the budget's arena back, before the dataset is written; on
// error (fill's or the release's) the import is closed, its scratch
// directory removed.
func inBudget(o Options, fill func(b *bounded) error) (*Imported, error) {
	b, free, err := startBounded(o)
	if err != nil {
		return nil, err
	}
	err = fill(b)
	b.arena, b.buf = nil, nil
	if err = errors.Join(err, free()); err != nil {
		b.im.Close()
		return nil, err
	}
	return b.im, nil
}

// filesSize is the total size of the files.
func filesSize(files []string) (int64, error) {
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return 0, err
		}
		total += st.Size()
	}
	return total, nil
}

// bounded is the state of one ImportBounded, or of one graph of a typed
// import's at a time.
type bounded struct {
	o       Options
	im      *Imported
	runs    *runSet
	arena   []uint64 // the budget: the sort buffer, then the merge's blocks
	buf     []uint64 // the keys not yet sorted (in arena)
	threads int
	tr      *tracker
	shape   keyShape // the graph entries an edge makes
	kept    int64    // bytes of the graphs already built in the scratch directory
}

// keyShape says which graph entries an edge u -> v makes.
type keyShape struct {
	dropLoops bool // an edge u -> u makes none (a graph within one type)
	forward   bool // row v lists u (and the edge is counted)
	backward  bool // row u lists v
}

// read reads every edge file into keys, spilling sorted runs.
func (b *bounded) read(ctx context.Context, files []string, e ends, total int64) error {
	b.buf = b.arena[:0]
	b.tr.begin("read", total, "bytes")
	var before int64 // bytes of the files already read
	for _, f := range files {
		err := readEdges(ctx, f, b.o, e, b.add, func(off int64) {
			b.tr.p.Edges, b.tr.p.Runs = b.im.Stats.Edges, len(b.runs.runs)
			b.tr.report(before + off)
		})
		if err != nil {
			return err
		}
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		before += st.Size()
	}
	return nil
}

// add takes one edge u -> v as b.shape says: row v lists u, row u lists
// v, or both; self loops are dropped where the shape says so.
func (b *bounded) add(u, v int32) error {
	if b.shape.forward {
		b.im.Stats.Edges++
	}
	if u == v && b.shape.dropLoops {
		return nil
	}
	if len(b.buf)+2 > cap(b.buf) {
		if err := b.runs.spill(b.buf, b.threads); err != nil {
			return err
		}
		b.buf = b.arena[:0]
	}
	if b.shape.forward {
		b.buf = append(b.buf, key(v, u))
		b.im.Stats.Keys++
	}
	if b.shape.backward {
		b.buf = append(b.buf, key(u, v))
		b.im.Stats.Keys++
	}
	return nil
}

// build merges the keys into the graph's files in the scratch directory.
func (b *bounded) build(ctx context.Context, n int64) (err error) {
	var cs []*cursor
	var keys int64
	if len(b.runs.runs) == 0 {
		// Everything fitted: merge the buffer's sorted parts in memory.
		for _, p := range sortParts(b.buf, b.threads) {
			cs = append(cs, &cursor{keys: p})
			keys += int64(len(p))
		}
	} else {
		if err := b.runs.spill(b.buf, b.threads); err != nil {
			return err
		}
		b.buf = nil
		b.im.Stats.Runs += b.runs.seq
		passes, err := b.runs.reduce(ctx, b.arena, func(pass int, keys int64) {
			b.tr.p.Pass, b.tr.p.Runs = pass, len(b.runs.runs)
			b.tr.begin("combine", keys, "keys")
		})
		b.im.Stats.Passes += passes
		if err != nil {
			return err
		}
		if cs, err = openRuns(b.runs.runs, b.arena); err != nil {
			return err
		}
		keys = totalKeys(b.runs.runs)
	}
	w, err := newCSRWriter(b.runs.dir, n)
	if err != nil {
		closeAll(cs)
		return err
	}
	b.tr.p.Runs = len(b.runs.runs)
	b.tr.begin("merge", keys, "keys")
	_, err = merge(ctx, cs, w.add, b.tr.report)
	err = errors.Join(err, closeAll(cs), w.close())
	if err != nil {
		return err
	}
	csr := w.entries*4 + (n+1)*8
	b.im.Stats.ScratchPeak = max(b.im.Stats.ScratchPeak, b.kept+max(b.runs.peak, b.runs.disk+csr))
	b.kept += csr
	return b.runs.remove(b.runs.runs)
}

// mapGraph maps the graph files of n rows in dir.
func (im *Imported) mapGraph(dir string, n int64) (*graph.CSR, error) {
	ptr, err := openMapped(filepath.Join(dir, indptrRaw), 8)
	if err != nil {
		return nil, err
	}
	im.maps = append(im.maps, ptr)
	idx, err := openMapped(filepath.Join(dir, indicesRaw), 4)
	if err != nil {
		return nil, err
	}
	im.maps = append(im.maps, idx)
	g := &graph.CSR{NumNodes: n, Indptr: ptr.int64s(), Indices: idx.int32s()}
	if int64(len(g.Indptr)) != n+1 || g.Indptr[n] != int64(len(g.Indices)) {
		return nil, fmt.Errorf("the graph built in %s: %d offsets for %d vertices, ending at %d for %d entries",
			dir, len(g.Indptr), n, g.Indptr[len(g.Indptr)-1], len(g.Indices))
	}
	return g, nil
}

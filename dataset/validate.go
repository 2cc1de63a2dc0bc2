package dataset

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/fanout-gnn/fanout/graph"
)

// Validate checks that the dataset is consistent: indptr has num_nodes+1
// entries, starts at 0, never decreases and ends at the number of indices;
// the right one of Indices/Indices64 is set and every index lies in
// [0, num_nodes); one feature table (float32 or bfloat16) holds
// num_nodes*feat_dim values; labels lie in [-1, num_classes); every
// feature is finite; a graph declared symmetric is (symmetric.go); split
// ids lie in [0, num_nodes), are labelled and are not repeated, within a
// split or across splits (a vertex is in one split at most); the train
// split is not empty (valid and test may be); the manifest that describes
// the dataset is one ParseManifest accepts (text on one line, counts in
// range). Each check is one pass, split across GOMAXPROCS goroutines. The
// error names the file and field at fault.
//
// A typed dataset is checked as validateTyped says.
func (d *Dataset) Validate() error {
	if d.Typed() {
		return d.validateTyped()
	}
	if d.Graph == nil {
		return errors.New("dataset has no graph")
	}
	g := d.Graph
	n := g.NumNodes
	if n < 0 {
		return fileErr(ManifestFile, "num_nodes is negative (%d)", n)
	}
	if d.FeatDim < 1 {
		return fileErr(ManifestFile, "feat_dim is %d, want >= 1", d.FeatDim)
	}
	if d.NumClasses < 1 {
		return fileErr(ManifestFile, "num_classes is %d, want >= 1", d.NumClasses)
	}
	if err := validateCSR(g, "num_nodes", n, IndptrFile, IndicesFile); err != nil {
		return err
	}
	if err := d.validateFeatures(); err != nil {
		return err
	}
	if d.Symmetric {
		if err := checkSymmetric(g); err != nil {
			return err
		}
	}
	if err := d.validateLabels(n, "num_nodes", d.validateIDs); err != nil {
		return err
	}
	if err := d.validateLink(); err != nil {
		return err
	}
	if err := manifestOf(d).check(); err != nil {
		return &FileError{File: ManifestFile, Err: err}
	}
	return nil
}

// split is one of a dataset's vertex splits, for messages.
type split struct {
	name, file string
	ids        []int64
}

// splits lists the train, valid and test splits, in that order.
func (d *Dataset) splits() []split {
	return []split{{"training", TrainFile, d.Train}, {"validation", ValidFile, d.Valid}, {"test", TestFile, d.Test}}
}

// CheckFeatures reports the first feature that is NaN or infinite, by row
// (vertex) and column, in a [rows, dim] row-major matrix.
func CheckFeatures(feat []float32, dim int) error {
	if dim < 1 {
		return nil
	}
	return firstError(int64(len(feat)), func(lo, hi int64) error {
		for i, v := range feat[lo:hi] {
			if v-v != 0 { // NaN or ±Inf
				return notFinite(lo+int64(i), dim, fmt.Sprint(v))
			}
		}
		return nil
	})
}

// validateFeatures checks that one feature table is set, float32 or
// bfloat16, of num_nodes*feat_dim finite values; features left on disk
// (FeatureFile) are checked for their shape alone.
func (d *Dataset) validateFeatures() error {
	if f := d.FeatureFile; f != nil && d.Features == nil && d.FeaturesBF16 == nil {
		if f.Rows != d.Graph.NumNodes || f.Dim != d.FeatDim {
			return fileErr(FeatFile, "[%d, %d] on disk, want [num_nodes, feat_dim] = [%d, %d]", f.Rows, f.Dim, d.Graph.NumNodes, d.FeatDim)
		}
		return nil
	}
	return validateTable(FeatFile, d.Graph.NumNodes, d.FeatDim, d.Features, d.FeaturesBF16, "num_nodes*feat_dim")
}

// validateTable checks a feature table of file: one of f32 and bf16 set,
// of rows*dim finite values (want names the product for messages).
func validateTable(file string, rows int64, dim int, f32 []float32, bf16 []uint16, want string) error {
	if f32 != nil && bf16 != nil {
		return fileErr(file, "both float32 and bfloat16 features are set; a dataset holds one")
	}
	values := int64(len(f32))
	if bf16 != nil {
		values = int64(len(bf16))
	}
	if n := rows * int64(dim); values != n {
		return fileErr(file, "%d values, want %s = %d*%d = %d", values, want, rows, dim, n)
	}
	err := CheckFeatures(f32, dim)
	if bf16 != nil {
		err = CheckFeaturesBF16(bf16, dim)
	}
	if err != nil {
		return &FileError{File: file, Err: err}
	}
	return nil
}

// validateLabels checks the labels of the n labelled vertices (count
// names n for messages): a label per vertex in [-1, num_classes), a train
// split that is not empty; then runs between, then checks the splits as
// validateSplit does.
func (d *Dataset) validateLabels(n int64, count string, between func() error) error {
	if int64(len(d.Labels)) != n {
		return fileErr(LabelFile, "%d labels, want %s = %d", len(d.Labels), count, n)
	}
	classes := int32(min(d.NumClasses, 1<<31-1))
	err := firstError(int64(len(d.Labels)), func(lo, hi int64) error {
		for v, c := range d.Labels[lo:hi] {
			if c < -1 || c >= classes {
				return fileErr(LabelFile, "vertex %d has label %d, want -1 (unlabelled) or [0, %d)", lo+int64(v), c, classes)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(d.Train) == 0 {
		return fileErr(TrainFile, "the train split is empty")
	}
	if err := between(); err != nil {
		return err
	}
	seen := make([]uint64, (n+63)/64)
	splits := d.splits()
	for i := range splits {
		if err := d.validateSplit(splits[:i+1], n, seen); err != nil {
			return err
		}
	}
	return nil
}

// validateSplit checks the ids of the last of splits: in [0, n),
// labelled, not repeated and in none of the splits before it. seen is the
// bitmap over the vertices of the earlier splits; the split's own vertices
// are added.
func (d *Dataset) validateSplit(splits []split, n int64, seen []uint64) error {
	s := splits[len(splits)-1]
	for i, v := range s.ids {
		if v < 0 || v >= n {
			return fileErr(s.file, "entry %d is vertex %d, out of range [0, %d)", i, v, n)
		}
		if d.Labels[v] < 0 {
			return fileErr(s.file, "entry %d is vertex %d, which is unlabelled (label -1)", i, v)
		}
		w, bit := v/64, uint64(1)<<(v%64)
		if seen[w]&bit != 0 {
			return splitClash(splits, i)
		}
		seen[w] |= bit
	}
	return nil
}

// splitClash describes entry i of the last of splits, whose vertex was seen
// before: a repeat within the split, or a vertex that is also in an earlier
// split (the splits must be disjoint: a test vertex trained on measures
// nothing).
func splitClash(splits []split, i int) error {
	s := splits[len(splits)-1]
	v := s.ids[i]
	if j := slices.Index(s.ids[:i], v); j >= 0 {
		return fileErr(s.file, "entry %d repeats vertex %d (entry %d)", i, v, j)
	}
	for _, e := range splits[:len(splits)-1] {
		if j := slices.Index(e.ids, v); j >= 0 {
			return fileErr(s.file, "entry %d is vertex %d, which is also in the %s split (%s entry %d); a vertex belongs to one split at most",
				i, v, e.name, e.file, j)
		}
	}
	return fileErr(s.file, "entry %d repeats vertex %d", i, v)
}

// validateCSR checks the CSR arrays of a graph whose rows are g.NumNodes
// vertices (the manifest's count rows, for messages) and whose indices
// are cols vertices' ids (cols = g.NumNodes but for a relation between
// two types), naming the files ptrFile and idxFile.
func validateCSR(g *graph.CSR, rows string, cols int64, ptrFile, idxFile string) error {
	n := g.NumNodes
	if int64(len(g.Indptr)) != n+1 {
		return fileErr(ptrFile, "%d entries, want %s+1 = %d", len(g.Indptr), rows, n+1)
	}
	if g.Indptr[0] != 0 {
		return fileErr(ptrFile, "indptr[0] = %d, want 0", g.Indptr[0])
	}
	wide := cols >= graph.MaxInt32Vertices
	switch {
	case wide && g.Indices != nil:
		return fileErr(idxFile, "%d vertices need int64 indices, but int32 indices are set", cols)
	case !wide && g.Indices64 != nil:
		return fileErr(idxFile, "%d vertices need int32 indices, but int64 indices are set", cols)
	}
	edges := int64(len(g.Indices))
	if wide {
		edges = int64(len(g.Indices64))
	}
	if last := g.Indptr[n]; last != edges {
		return fileErr(ptrFile, "indptr[%d] = %d, but %s holds %d edges", n, last, idxFile, edges)
	}
	err := firstError(n, func(lo, hi int64) error {
		for v := lo; v < hi; v++ {
			if g.Indptr[v+1] < g.Indptr[v] {
				return fileErr(ptrFile, "indptr decreases at row %d (%d -> %d)", v, g.Indptr[v], g.Indptr[v+1])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if wide {
		return checkIndices(g, g.Indices64, cols, idxFile)
	}
	return checkIndices(g, g.Indices, cols, idxFile)
}

// checkIndices reports the first neighbour id outside [0, cols).
func checkIndices[T int32 | int64](g *graph.CSR, idx []T, cols int64, idxFile string) error {
	return firstError(int64(len(idx)), func(lo, hi int64) error {
		for i, u := range idx[lo:hi] {
			if int64(u) < 0 || int64(u) >= cols {
				e := lo + int64(i)
				row := sort.Search(int(g.NumNodes), func(v int) bool { return g.Indptr[v+1] > e })
				return fileErr(idxFile, "edge %d (row %d) has neighbour %d, out of range [0, %d)", e, row, u, cols)
			}
		}
		return nil
	})
}

// FileError is an error found in one file of a dataset (or in the array an
// in-memory dataset would write to that file).
type FileError struct {
	File string // file name (a path once Open has added the directory)
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// fileErr makes a FileError from a message.
func fileErr(file, format string, args ...any) error {
	return &FileError{File: file, Err: fmt.Errorf(format, args...)}
}

// serialBelow is the size under which checks run on one goroutine.
const serialBelow = 1 << 16

// firstError runs check over [0, n) split into GOMAXPROCS contiguous parts in
// parallel and returns the error of the lowest failing part, so the error
// names the first bad element whatever the thread count.
func firstError(n int64, check func(lo, hi int64) error) error {
	parts := int64(runtime.GOMAXPROCS(0))
	if n < serialBelow || parts <= 1 {
		return check(0, n)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = check(n*p/parts, n*(p+1)/parts)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

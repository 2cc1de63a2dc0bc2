// Package ogb imports node-property-prediction datasets of the Open Graph
// Benchmark from their raw folders: either gzip CSV files without header
// (raw/edge.csv.gz, raw/node-feat.csv.gz, raw/node-label.csv.gz,
// raw/num-node-list.csv.gz, raw/num-edge-list.csv.gz) as ogbn-arxiv and
// ogbn-products ship, or the NumPy layout of ogbn-papers100M
// (raw/data.npz and raw/node-label.npz); the split comes from
// split/<name>/{train,valid,test}.csv.gz. CSV files are parsed in parallel.
// Link-prediction datasets (ogbl-*, with .pt split files) import with
// ImportLink.
package ogb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
)

// Options controls Import.
type Options struct {
	// Name is the dataset name; empty means the name of the source folder.
	Name string
	// Symmetrize adds the inverse of every edge (OGB's add_inverse_edge,
	// which ogbn-products needs; see AddInverseEdge). Without it a directed
	// graph such as ogbn-arxiv stays directed.
	Symmetrize bool
	// Split names the folder under split/; empty means the only one there is.
	Split string
	// Threads is the number of parsing and building goroutines; <= 0 means
	// GOMAXPROCS. The result does not depend on it.
	Threads int
	// Progress, when non-nil, is told how far each stage has come: bytes of
	// a file read (stage = the file's name) or the graph builder's stages.
	// Calls are serialized but may come from any goroutine.
	Progress func(stage string, done, total int64)

	// Target names the labelled type of a typed folder; empty means the
	// one type with labels.
	Target string
	// NoReverse leaves out a typed folder's reverse relations, which are
	// added by default (dataset.AddReverse).
	NoReverse bool
}

// AddInverseEdge reports OGB's add_inverse_edge setting for a dataset name
// ("ogbn-products" or "ogbn_products"): true for ogbn-products and
// ogbn-proteins, false otherwise.
func AddInverseEdge(name string) bool {
	switch name {
	case "ogbn-products", "ogbn_products", "ogbn-proteins", "ogbn_proteins":
		return true
	}
	return false
}

// Import reads the OGB dataset folder src (the folder holding raw/ and
// split/, or raw/ itself). Row v of the graph lists the sources of the edges
// into v (for a directed graph, the vertices whose messages v receives); self
// loops and duplicate edges are dropped. Labels that are NaN or empty mark
// unlabelled vertices (-1). Errors name the file and, for CSV, the line. A
// folder in OGB's typed layout (ogbn-mag's raw/num-node-dict.csv.gz and
// raw/relations/) imports as a typed dataset (importTyped).
func Import(src string, opt Options) (*dataset.Dataset, error) {
	root, raw, err := locate(src)
	if err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	if isTyped(raw) {
		return importTyped(root, raw, opt)
	}
	if opt.Target != "" || opt.NoReverse {
		return nil, fmt.Errorf("%s: a graph of one type: --target and --no-reverse are for typed folders (raw/%s.csv.gz)", raw, nodeDictFile)
	}
	var d *dataset.Dataset
	if exists(filepath.Join(raw, "data.npz")) {
		d, err = importNPZ(raw, opt)
	} else {
		d, err = importCSV(raw, opt)
	}
	if err != nil {
		return nil, err
	}
	if d.Train, d.Valid, d.Test, err = readSplit(root, "", d.Graph.NumNodes, d.Labels, opt); err != nil {
		return nil, err
	}
	d.Name = opt.name(root)
	d.Symmetric = opt.Symmetrize
	d.Preprocessing = dataset.GraphSteps(graphOptions(opt))
	d.Source = "ogb " + d.Name
	return d, nil
}

// withDefaults fills in the thread count and serializes Progress (files
// are read concurrently).
func (opt Options) withDefaults() Options {
	if opt.Threads <= 0 {
		opt.Threads = runtime.GOMAXPROCS(0)
	}
	if report := opt.Progress; report != nil {
		var mu sync.Mutex
		opt.Progress = func(stage string, done, total int64) {
			mu.Lock()
			defer mu.Unlock()
			report(stage, done, total)
		}
	}
	return opt
}

// name is the dataset's name: opt.Name, else the root folder's.
func (opt Options) name(root string) string {
	if opt.Name != "" {
		return opt.Name
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return filepath.Base(root)
}

// locate finds the dataset root and its raw folder.
func locate(src string) (root, raw string, err error) {
	src = filepath.Clean(src)
	st, err := os.Stat(src)
	if err != nil {
		return "", "", err
	}
	if !st.IsDir() {
		return "", "", fmt.Errorf("%s: not a directory (want an OGB dataset folder with raw/ and split/)", src)
	}
	isRaw := func(dir string) bool {
		return hasText(dir, "edge") || exists(filepath.Join(dir, "data.npz")) || isTyped(dir)
	}
	if r := filepath.Join(src, "raw"); isRaw(r) {
		return src, r, nil
	}
	if isRaw(src) {
		return filepath.Dir(src), src, nil
	}
	return "", "", fmt.Errorf("%s: no raw/edge.csv.gz, raw/data.npz or, for a typed dataset such as ogbn-mag, raw/%s.csv.gz", src, nodeDictFile)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// newParser opens dir/base.csv.gz (or .csv) for parsing.
func newParser(dir, base string, opt Options) (*parser, *textFile, error) {
	t, err := openText(dir, base, opt.Progress)
	if err != nil {
		return nil, nil, err
	}
	st, err := t.f.Stat()
	if err != nil {
		t.Close()
		return nil, nil, fmt.Errorf("%s: %w", t.path, err)
	}
	maxText := st.Size()
	if t.gz {
		maxText = st.Size()*deflateMaxRatio + 1<<16
	}
	p := &parser{
		cfg:     scanConfig{name: t.path, threads: opt.Threads, chunkSize: defaultChunkSize, maxLine: defaultMaxLine},
		maxText: maxText,
	}
	return p, t, nil
}

// readCount reads a num-node-list or num-edge-list file.
func readCount(dir, base string, opt Options) (int64, error) {
	p, t, err := newParser(dir, base, opt)
	if err != nil {
		return 0, err
	}
	defer t.Close()
	return p.count(t.r)
}

// readCounts reads the CSV layout's vertex count (num-node-list, below
// 2^31-1) and edge count (num-edge-list; -1 where there is none).
func readCounts(raw string, opt Options) (n, numEdges int64, err error) {
	if n, err = readCount(raw, "num-node-list", opt); err != nil {
		return 0, 0, err
	}
	if n >= graph.MaxInt32Vertices {
		return 0, 0, fmt.Errorf("%s: %d vertices: too many for the CSV importer (limit 2^31-1)", raw, n)
	}
	numEdges = -1
	if hasText(raw, "num-edge-list") {
		if numEdges, err = readCount(raw, "num-edge-list", opt); err != nil {
			return 0, 0, err
		}
	}
	return n, numEdges, nil
}

// importCSV reads the CSV layout (ogbn-arxiv, ogbn-products).
func importCSV(raw string, opt Options) (*dataset.Dataset, error) {
	n, numEdges, err := readCounts(raw, opt)
	if err != nil {
		return nil, err
	}
	// Each gzip stream decompresses on one core: read the edges and the
	// vertex files at the same time.
	d := &dataset.Dataset{}
	var vertexErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Features, d.FeatDim, d.Labels, d.NumClasses, vertexErr = readVertexFiles(raw, n, opt)
	}()
	g, err := readGraph(raw, n, numEdges, opt)
	<-done
	if err != nil {
		return nil, err
	}
	if vertexErr != nil {
		return nil, vertexErr
	}
	d.Graph = g
	return d, nil
}

// readVertexFiles reads node-feat and node-label.
func readVertexFiles(raw string, n int64, opt Options) (feat []float32, dim int, labels []int32, classes int, err error) {
	p, t, err := newParser(raw, "node-feat", opt)
	if err != nil {
		return nil, 0, nil, 0, err
	}
	feat, dim, err = p.features(t.r, n)
	t.Close()
	if err != nil {
		return nil, 0, nil, 0, err
	}
	if p, t, err = newParser(raw, "node-label", opt); err != nil {
		return nil, 0, nil, 0, err
	}
	labels, classes, err = p.labels(t.r, n)
	t.Close()
	if err != nil {
		return nil, 0, nil, 0, err
	}
	return feat, dim, labels, classes, nil
}

// readGraph parses edge.csv.gz and builds the CSR graph.
func readGraph(raw string, n, numEdges int64, opt Options) (*graph.CSR, error) {
	p, t, err := newParser(raw, "edge", opt)
	if err != nil {
		return nil, err
	}
	src, dst, err := p.edges(t.r, n, numEdges)
	t.Close()
	if err != nil {
		return nil, err
	}
	return buildGraph(n, src, dst, opt)
}

// graphOptions is how the graph is built (and what the manifest records).
func graphOptions(opt Options) graph.BuildOptions {
	return graph.BuildOptions{Symmetrize: opt.Symmetrize, DropSelfLoops: true, Dedup: true}
}

// buildGraph builds row v = sources of the edges into v.
func buildGraph(n int64, src, dst []int32, opt Options) (*graph.CSR, error) {
	bo := graphOptions(opt)
	bo.Threads, bo.Progress = opt.Threads, opt.Progress
	g, err := graph.FromEdges(n, dst, src, bo)
	if err != nil {
		return nil, fmt.Errorf("building the graph: %w", err)
	}
	return g, nil
}

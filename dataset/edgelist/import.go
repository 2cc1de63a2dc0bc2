// Package edgelist imports a user's graph from an edge list and a node
// table: edges from CSV or TSV files (with a header row, optionally gzip)
// or Parquet files, read row by row; vertices, with their features, label
// and optionally split, from one CSV or Parquet node table. The node
// table's ids (64-bit integers, or strings) become the dense vertex ids
// 0..n-1 in the order of its rows, and the dataset keeps them
// (dataset.NodeIDs). An edge whose id the node table lacks is refused:
// every vertex needs features and a label. The nodes may instead be .npy
// arrays in id order (features, and labels), the edges' ids being their
// rows.
//
// Every bad value is one RowError naming the file, the row and the column.
// Import holds in memory the node table's arrays, the id map and the edge
// arrays (two int32 per edge); the edge files are streamed. ImportBounded
// holds the edges within a memory budget instead: it sorts them in runs
// on disk, merges the runs and maps the graph it writes (bounded.go).
package edgelist

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// Options controls Import.
type Options struct {
	Src, Dst string // the edge files' columns of the two endpoints

	// Nodes is the node table: a CSV, TSV or Parquet file, one row per
	// vertex; or a .npy file of features in id order ([n, dim] or [n]).
	Nodes string
	ID    string // its column of vertex ids
	// Label is its column of class ids (-1, empty, null or NaN:
	// unlabelled); with .npy features, a .npy file of n class ids.
	Label string
	// Features names the feature columns, in order; nil means every other
	// column that is numeric in the first row (but the split column). A
	// column is a scalar, or a list (Parquet, or a CSV cell "[0.5, 1, 2]").
	Features []string
	// Split names a column of train, valid (val), test or none/empty, or
	// three comma-separated mask columns (train,valid,test: true/false,
	// 1/0); empty means a split drawn by dataset.Split under Draw.
	Split string
	Draw  dataset.SplitOptions

	// Directed keeps the edges as given: row v of the graph lists the
	// sources of the edges into v. Otherwise the graph is symmetrized.
	Directed bool
	Threads  int    // graph building goroutines; <= 0 means GOMAXPROCS
	Name     string // the dataset's name; empty means the node table's file name

	// Memory is ImportBounded's budget for edges, in bytes: the sort
	// buffer and the merge's read buffers (at least MinMemory). The node
	// table's arrays and the id map come on top of it.
	Memory int64
	// TempDir is where ImportBounded keeps its sorted runs and the graph
	// it builds, in a directory of its own; empty means os.TempDir(). It
	// needs the disk DiskNeeded states.
	TempDir string
	// Progress, when non-nil, is told how ImportBounded is getting on:
	// ProgressPrinter writes it as lines of text.
	Progress func(Progress)
}

// graphOptions is how the graph is built, as the other importers do:
// self loops and duplicate edges dropped, symmetrized unless directed.
func graphOptions(o Options) graph.BuildOptions {
	return graph.BuildOptions{Symmetrize: !o.Directed, DropSelfLoops: true, Dedup: true, Threads: o.Threads}
}

// Import reads the edge files (see Expand) and the node table of o into a
// dataset, its NodeIDs set.
func Import(files []string, o Options) (*dataset.Dataset, error) {
	nd, err := readNodes(specOf(o))
	if err != nil {
		return nil, err
	}
	var e edges
	for _, f := range files {
		if err := readEdges(context.Background(), f, o, oneTable(nd.ids, o.Nodes), e.add, nil); err != nil {
			return nil, err
		}
	}
	n := nd.ids.len()
	g, err := graph.FromEdges(n, e.dst, e.src, graphOptions(o))
	if err != nil {
		return nil, err
	}
	return assemble(g, nd, files, o)
}

// assemble is the dataset of the graph g built from files and the nodes
// nd: its ids, name, split and source.
func assemble(g *graph.CSR, nd *nodes, files []string, o Options) (*dataset.Dataset, error) {
	ids, err := nd.ids.nodeIDs(o.Nodes)
	if err != nil {
		return nil, err
	}
	d := &dataset.Dataset{
		Name: o.Name, Graph: g, Features: nd.feat, FeatDim: nd.dim, Labels: nd.labels, NumClasses: nd.classes,
		Symmetric: !o.Directed, Preprocessing: dataset.GraphSteps(graphOptions(o)), IDs: ids,
	}
	if d.Name == "" {
		d.Name = tableName(o.Nodes)
	}
	if o.Split != "" {
		d.Train, d.Valid, d.Test = nd.split[0], nd.split[1], nd.split[2]
		if len(d.Train) == 0 {
			return nil, fmt.Errorf("%s: --split %s puts no vertex in train", o.Nodes, quote.Quote(o.Split))
		}
	} else if d.Train, d.Valid, d.Test, err = dataset.Split(nd.labels, nd.classes, o.Draw); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Nodes, err)
	}
	d.Source = source(files, o)
	return d, nil
}

// tableName is a file's name without its extensions (.csv.gz, .parquet).
func tableName(path string) string {
	base := filepath.Base(path)
	if i := strings.IndexByte(base, '.'); i > 0 {
		return base[:i]
	}
	return base
}

// source describes the input for the manifest.
func source(files []string, o Options) string {
	edgeFiles := filepath.Base(files[0])
	if len(files) > 1 {
		edgeFiles = fmt.Sprintf("%s and %d more", edgeFiles, len(files)-1)
	}
	split := "split from " + o.Split
	if o.Split == "" {
		split = o.Draw.String()
	}
	return fmt.Sprintf("edges %s, nodes %s (%s)", edgeFiles, filepath.Base(o.Nodes), split)
}

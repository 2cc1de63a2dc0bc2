package edgelist

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
)

// TestScale measures ImportBounded on a generated edge list; it runs only
// when FANOUT_SCALE_DIR names a directory. FANOUT_SCALE_STEP=generate
// writes FANOUT_SCALE_EDGES random edges (CSV, integer ids) among
// FANOUT_SCALE_EDGES/10 vertices there, with .npy features and labels;
// FANOUT_SCALE_STEP=import imports them (and any other edges*.csv there)
// within FANOUT_SCALE_MEMORY bytes, writes the dataset to out/ there and
// opens it again (docs/perf.md).
func TestScale(t *testing.T) {
	dir := os.Getenv("FANOUT_SCALE_DIR")
	if dir == "" {
		t.Skip("FANOUT_SCALE_DIR is not set: no scale measurement")
	}
	switch step := os.Getenv("FANOUT_SCALE_STEP"); step {
	case "generate":
		m, err := strconv.ParseInt(os.Getenv("FANOUT_SCALE_EDGES"), 10, 64)
		if err != nil {
			t.Fatalf("FANOUT_SCALE_EDGES: %v", err)
		}
		generateScale(t, dir, m)
	case "import":
		mem, err := strconv.ParseInt(os.Getenv("FANOUT_SCALE_MEMORY"), 10, 64)
		if err != nil {
			t.Fatalf("FANOUT_SCALE_MEMORY: %v", err)
		}
		o := Options{Src: "src", Dst: "dst", Nodes: filepath.Join(dir, "feat.npy"), Label: filepath.Join(dir, "label.npy"),
			Memory: mem, TempDir: dir, Progress: ProgressPrinter(os.Stderr, 30*time.Second)}
		files, err := Expand([]string{filepath.Join(dir, "edges*.csv")})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		im, err := ImportBounded(context.Background(), files, o)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Close()
		imported := time.Since(start)
		if err := dataset.Write(filepath.Join(dir, "out"), im.Dataset); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "stats %+v\nvertices %d, entries %d; import %s, with the write %s; DiskNeeded %d bytes\n",
			im.Stats, im.Dataset.Graph.NumNodes, im.Dataset.Graph.NumEdges(), imported.Round(time.Second),
			time.Since(start).Round(time.Second), DiskNeeded(im.Stats.Edges, im.Dataset.Graph.NumNodes, o))
		entries := im.Dataset.Graph.NumEdges()
		if err := im.Close(); err != nil {
			t.Fatal(err)
		}
		back, err := dataset.Open(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer back.Close()
		if back.Graph.NumEdges() != entries || back.Graph.Indptr[back.Graph.NumNodes] != entries {
			t.Fatalf("the written dataset has %d entries (indptr ends at %d), want %d", back.Graph.NumEdges(), back.Graph.Indptr[back.Graph.NumNodes], entries)
		}
		fmt.Fprintf(os.Stderr, "opened again: %d entries, indptr ends at %d\n", back.Graph.NumEdges(), back.Graph.Indptr[back.Graph.NumNodes])
	default:
		t.Fatalf("FANOUT_SCALE_STEP %q: want generate or import", step)
	}
}

// generateScale writes m random edges among m/10 vertices, the features
// (one per vertex) and labels (4 classes).
func generateScale(t *testing.T, dir string, m int64) {
	n := max(m/10, 16)
	feat := make([]float32, n)
	label := make([]int64, n)
	for v := range n {
		feat[v], label[v] = float32(v%97), v%4
	}
	if err := npy.WriteFile(filepath.Join(dir, "feat.npy"), feat, []int64{n}); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteFile(filepath.Join(dir, "label.npy"), label, []int64{n}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "edges.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("src,dst\n")
	r := rand.New(rand.NewPCG(uint64(m), 2))
	var line []byte
	for range m {
		line = strconv.AppendInt(line[:0], r.Int64N(n), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, r.Int64N(n), 10)
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

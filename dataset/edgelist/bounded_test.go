package edgelist

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
)

// randomEdges writes a node table of n string-id vertices and an edge file
// of m random edges (with self loops and repeats), returning their paths.
func randomEdges(t *testing.T, dir string, n, m int, seed uint64) (nodes, edges string) {
	t.Helper()
	name := func(i int) string { return fmt.Sprintf("v%d", i*7+3) }
	var nb, eb strings.Builder
	nb.WriteString("id,label,x\n")
	for i := range n {
		fmt.Fprintf(&nb, "%s,%d,%d\n", name(i), i%3, i)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	eb.WriteString("src,dst\n")
	for range m {
		u := r.IntN(n)
		v := r.IntN(n)
		if r.IntN(10) == 0 {
			v = u
		}
		fmt.Fprintf(&eb, "%s,%s\n", name(u), name(v))
	}
	return writeText(t, dir, "nodes.csv", nb.String()), writeText(t, dir, "edges.csv", eb.String())
}

// importBounded runs ImportBounded and closes it at the test's end.
func importBounded(t *testing.T, files []string, o Options) *Imported {
	t.Helper()
	im, err := ImportBounded(context.Background(), files, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := im.Close(); err != nil {
			t.Error(err)
		}
	})
	return im
}

// TestBoundedMatchesImport checks that the external sort builds the graph
// Import builds, whether the edges fit the budget, need runs merged in one
// pass, or in several.
func TestBoundedMatchesImport(t *testing.T) {
	dir := t.TempDir()
	nodes, edges := randomEdges(t, dir, 3000, 60000, 7)
	for _, tc := range []struct {
		name      string
		memory    int64
		threads   int
		directed  bool
		runs      bool // sorted runs written
		multipass bool
	}{
		{"fits", 8 << 20, 2, false, false, false},
		{"one pass", 512 << 10, 2, false, true, false},
		{"several passes", MinMemory, 2, false, true, true},
		{"several passes directed", MinMemory, 3, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(nodes)
			o.Directed, o.Threads = tc.directed, tc.threads
			want, err := Import([]string{edges}, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Memory, o.TempDir = tc.memory, t.TempDir()
			var stages []string
			o.Progress = func(p Progress) {
				if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
					stages = append(stages, p.Stage)
				}
			}
			im := importBounded(t, []string{edges}, o)
			got := im.Dataset
			if !slices.Equal(got.Graph.Indptr, want.Graph.Indptr) || !slices.Equal(got.Graph.Indices, want.Graph.Indices) {
				t.Fatalf("graphs differ: %d/%d entries (bounded/in memory)", got.Graph.NumEdges(), want.Graph.NumEdges())
			}
			s := im.Stats
			if s.Edges != 60000 || (s.Runs > 0) != tc.runs || (s.Passes > 0) != tc.multipass {
				t.Fatalf("stats %+v: want 60000 edges, runs %v, several passes %v", s, tc.runs, tc.multipass)
			}
			wantStages := []string{"read", "merge"}
			if tc.multipass {
				wantStages = []string{"read", "combine", "merge"}
			}
			if !slices.Equal(slices.Compact(stages), wantStages) {
				t.Fatalf("progress stages %v, want %v", stages, wantStages)
			}
			if s.ScratchPeak <= 0 || s.ScratchPeak > DiskNeeded(s.Edges, got.Graph.NumNodes, o) {
				t.Fatalf("scratch peak %d bytes, above DiskNeeded's %d", s.ScratchPeak, DiskNeeded(s.Edges, got.Graph.NumNodes, o))
			}
			if got.Name != want.Name || !slices.Equal(got.Train, want.Train) || got.IDs == nil || !slices.Equal(got.IDs.Strings, want.IDs.Strings) {
				t.Fatal("the dataset around the graph differs from Import's")
			}
			out := filepath.Join(t.TempDir(), "g")
			if err := dataset.Write(out, got); err != nil {
				t.Fatal(err)
			}
			back, err := dataset.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			if back.Graph.NumEdges() != want.Graph.NumEdges() || !slices.Equal(back.Graph.Indices, want.Graph.Indices) {
				t.Fatal("the written dataset's graph differs")
			}
		})
	}
}

// TestBoundedLeavesNothing checks that a malformed row fails naming the
// file, row and column, and that the scratch directory is removed.
func TestBoundedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	nodes, edges := randomEdges(t, dir, 100, 5000, 3)
	bad := writeText(t, dir, "bad.csv", "src,dst\nv3,v10\nv10,nobody\n")
	o := opts(nodes)
	o.Memory, o.TempDir = MinMemory, t.TempDir()
	_, err := ImportBounded(context.Background(), []string{edges, bad}, o)
	var re *RowError
	if !errors.As(err, &re) || re.File != bad || re.Row != 2 || re.Column != "dst" {
		t.Fatalf("error %v: want a RowError at %s row 2 column dst", err, bad)
	}
	if left, _ := os.ReadDir(o.TempDir); len(left) != 0 {
		t.Fatalf("the failed import left %v", left)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ImportBounded(ctx, []string{edges}, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled import: %v", err)
	}
	if left, _ := os.ReadDir(o.TempDir); len(left) != 0 {
		t.Fatalf("the cancelled import left %v", left)
	}
}

// TestBoundedRemovesStale checks that a scratch directory no import holds
// is removed by the next import, and one that is held is kept.
func TestBoundedRemovesStale(t *testing.T) {
	dir := t.TempDir()
	nodes, edges := randomEdges(t, dir, 50, 500, 5)
	tmp := t.TempDir()
	stale := filepath.Join(tmp, scratchPrefix+"killed")
	held := filepath.Join(tmp, scratchPrefix+"running")
	for _, d := range []string{stale, held} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeText(t, d, "run-000001", "partial")
	}
	lock, busy, err := tryLock(held)
	if err != nil || busy {
		t.Skipf("no directory locks here (%v)", err)
	}
	defer lock.Close()
	o := opts(nodes)
	o.Memory, o.TempDir = MinMemory, tmp
	im := importBounded(t, []string{edges}, o)
	if !slices.Equal(im.Stats.Stale, []string{filepath.Base(stale)}) {
		t.Fatalf("removed %v, want the unheld %s only", im.Stats.Stale, filepath.Base(stale))
	}
	if _, err := os.Stat(held); err != nil {
		t.Fatalf("the held scratch directory is gone: %v", err)
	}
}

// TestBoundedBudget checks the refusal of a budget below MinMemory.
func TestBoundedBudget(t *testing.T) {
	_, err := ImportBounded(context.Background(), []string{"edges.csv"}, Options{Memory: MinMemory - 1})
	if err == nil || !strings.Contains(err.Error(), "below the least") {
		t.Fatalf("error %v", err)
	}
}

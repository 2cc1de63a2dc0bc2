package graphbolt_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/graphbolt/graphbolttest"
	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
)

// gzipEdges points the fixture's edge entry at edges/edge.csv.gz holding
// data, and returns that file's path.
func gzipEdges(t *testing.T, dir string, data []byte) string {
	t.Helper()
	editMetadata(t, dir, "path: edges/edge.csv", "path: edges/edge.csv.gz")
	path := filepath.Join(dir, "edges", "edge.csv.gz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGzipEdges: a gzip CSV edge file imports as the plain one does (DGL
// reads it so); plain text under a .gz name is said not to be gzip, and a
// stream cut short to be truncated, in one line naming the file.
func TestGzipEdges(t *testing.T) {
	f := graphbolttest.New(400)
	plainDir := f.Write(t)
	text, err := os.ReadFile(filepath.Join(plainDir, "edges", "edge.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := graphbolt.Import(plainDir, graphbolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gz := ogbtest.Gzip(t, string(text))

	dir := f.Write(t)
	gzipEdges(t, dir, gz)
	got, err := graphbolt.Import(dir, graphbolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Graph.NumEdges() != want.Graph.NumEdges() || !slices.Equal(got.Graph.Indices, want.Graph.Indices) {
		t.Errorf("gzip edges: %d edges, want the plain file's %d", got.Graph.NumEdges(), want.Graph.NumEdges())
	}

	dir = f.Write(t)
	path := gzipEdges(t, dir, text)
	_, err = graphbolt.Import(dir, graphbolt.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), path+": not a gzip file") {
		t.Errorf("plain text named .gz: %v; want it named as not gzip", err)
	}

	dir = f.Write(t)
	path = gzipEdges(t, dir, gz[:len(gz)/2])
	_, err = graphbolt.Import(dir, graphbolt.Options{})
	if !errors.Is(err, gzipfile.ErrTruncated) || !strings.HasPrefix(err.Error(), path+": ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("truncated gzip: %v; want one line naming %s as truncated", err, path)
	}
}

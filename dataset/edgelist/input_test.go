package edgelist

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
)

// truncatedGzip writes text gzip-compressed to dir/name, cut in half.
func truncatedGzip(t *testing.T, dir, name, text string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(text))
	w.Close()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes()[:b.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDamagedGzip: an edge file or node table named .gz that is plain
// text is said not to be gzip; one cut short is said to be truncated, in
// one line naming the file, by Import and by ImportBounded.
func TestDamagedGzip(t *testing.T) {
	nodes, edges := ringCSV(3000, func(i int) string { return "v" + strconv.Itoa(i) })
	plain := func(dir, name, text string) string { return writeText(t, dir, name, text) }
	cut := func(dir, name, text string) string { return truncatedGzip(t, dir, name, text) }
	for _, c := range []struct {
		name               string
		nodes, edges       func(dir, name, text string) string
		nodeFile, edgeFile string
		want               string
	}{
		{"edges not gzip", plain, plain, "nodes.csv", "edges.csv.gz", "edges.csv.gz: not a gzip file"},
		{"nodes not gzip", plain, plain, "nodes.csv.gz", "edges.csv", "nodes.csv.gz: not a gzip file"},
		{"edges truncated", plain, cut, "nodes.csv", "edges.csv.gz", "edges.csv.gz: after row"},
		{"nodes truncated", cut, plain, "nodes.csv.gz", "edges.csv", "nodes.csv.gz: after row"},
	} {
		for _, bounded := range []bool{false, true} {
			dir := t.TempDir()
			// writeText compresses a name ending in .gz: write plain text
			// under another name and rename it.
			np := c.nodes(dir, c.nodeFile+".txt", nodes)
			ep := c.edges(dir, c.edgeFile+".txt", edges)
			for _, p := range []string{np, ep} {
				if err := os.Rename(p, strings.TrimSuffix(p, ".txt")); err != nil {
					t.Fatal(err)
				}
			}
			o := opts(strings.TrimSuffix(np, ".txt"))
			files := []string{strings.TrimSuffix(ep, ".txt")}
			var err error
			if bounded {
				o.Memory = MinMemory
				var im *Imported
				if im, err = ImportBounded(context.Background(), files, o); err == nil {
					im.Close()
				}
			} else {
				_, err = Import(files, o)
			}
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			truncated := strings.HasSuffix(c.name, "truncated")
			if err == nil || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") ||
				truncated != errors.Is(err, gzipfile.ErrTruncated) || strings.Count(msg, "truncated") > 1 {
				t.Errorf("%s (bounded %v): error %q, want one line with %q", c.name, bounded, msg, c.want)
			}
		}
	}
}

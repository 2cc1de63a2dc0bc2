package edgelist

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/parquet-go/parquet-go"
)

// truncatedGzip writes text gzip-compressed to dir/name, cut in half.
func truncatedGzip(t *testing.T, dir, name, text string) string {
	t.Helper()
	gz := ogbtest.Gzip(t, text)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, gz[:len(gz)/2], 0o644); err != nil {
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

// TestLongInputQuoted: whatever the message, a field of a megabyte (an
// id, a label, a feature, a split or mask value, a column name, a flag)
// is quoted to at most quote.Limit bytes, in CSV and in Parquet.
func TestLongInputQuoted(t *testing.T) {
	big := strings.Repeat("7", 1<<20)
	nodes := "id,label,x\na,0,1\nb,1,2\nc,0,3\nd,1,4\n"
	edges := "src,dst\na,b\nc,d\n"
	for _, c := range []struct {
		name, nodes, edges string
		o                  func(*Options)
	}{
		{name: "edge id", edges: "src,dst\na,b\nc," + big + "\n"},
		{name: "repeated id", nodes: "id,label,x\n" + big + ",0,1\n" + big + ",1,2\n"},
		{name: "label", nodes: "id,label,x\na,0,1\nb,x" + big + ",2\n"},
		{name: "feature", nodes: "id,label,x\na,0,1\nb,1,x" + big + "\n"},
		{name: "list element", nodes: "id,label,x\na,0,[1 2]\nb,1,[1 x" + big + "]\n"},
		{name: "feature column", nodes: "id,label," + big + "\na,0,1\nb,1,x\n"},
		{name: "missing column", edges: big + ",dst\na,b\n"},
		{name: "split value", nodes: "id,label,x,s\na,0,1,train\nb,1,2,x" + big + "\n", o: func(o *Options) { o.Split = "s" }},
		{name: "mask value", nodes: "id,label,x,tr,va,te\na,0,1,1,0,0\nb,1,2,x" + big + ",,\n", o: func(o *Options) { o.Split = "tr,va,te" }},
		{name: "split flag", o: func(o *Options) { o.Split = big }},
		{name: "feature flag", o: func(o *Options) { o.Features = []string{big} }},
		{name: "label flag", o: func(o *Options) { o.Label = big }},
		{name: "id with a line break", nodes: "id,label,x\n\"a\n" + big + "\",0,1\nb,1,2\nc,0,3\nd,1,4\n", edges: "src,dst\nb,c\n"},
	} {
		dir := t.TempDir()
		o := opts(writeText(t, dir, "nodes.csv", cmp.Or(c.nodes, nodes)))
		if c.o != nil {
			c.o(&o)
		}
		_, err := Import([]string{writeText(t, dir, "edges.csv", cmp.Or(c.edges, edges))}, o)
		checkQuoted(t, c.name, dir, err)
	}
}

// TestLongParquetInputQuoted: a megabyte-long string id in a Parquet edge
// file is quoted to at most quote.Limit bytes.
func TestLongParquetInputQuoted(t *testing.T) {
	type node struct {
		ID    string `parquet:"id"`
		Label int64  `parquet:"label"`
		X     float64
	}
	type edge struct {
		Src string `parquet:"src"`
		Dst string `parquet:"dst"`
	}
	dir := t.TempDir()
	np, ep := filepath.Join(dir, "nodes.parquet"), filepath.Join(dir, "edges.parquet")
	if err := parquet.WriteFile(np, []node{{"a", 0, 1}, {"b", 1, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(ep, []edge{{"a", "b"}, {"a", strings.Repeat("y", 1<<20)}}); err != nil {
		t.Fatal(err)
	}
	_, err := Import([]string{ep}, opts(np))
	checkQuoted(t, "parquet edge id", dir, err)
}

// checkQuoted fails unless err is an error whose message, past the
// directory's name, is short: at most two quoted inputs and some words.
func checkQuoted(t *testing.T, name, dir string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: imported", name)
		return
	}
	msg := strings.ReplaceAll(err.Error(), dir, "DIR")
	if len(msg) > 2*quote.Limit+300 || !strings.Contains(msg, "bytes)") {
		t.Errorf("%s: a message of %d bytes, want the input quoted to at most %d: %.400s", name, len(msg), quote.Limit, msg)
	}
}

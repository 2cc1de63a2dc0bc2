package edgelist

import (
	"errors"
	"testing"

	"bytes"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/parquet-go/parquet-go"
	"os"
	"path/filepath"
	"strings"
)

// FuzzImportCSV: any node table and edge list give a valid dataset or an
// error, never a panic; an error about a row names it.
func FuzzImportCSV(f *testing.F) {
	f.Add("id,label,x\na,0,1\nb,1,2\nc,0,3\nd,1,[4]\n", "src,dst\na,b\nc,d\n")
	f.Add("id,label,e\n1,0,\"[1, 2]\"\n2,1,[3 4]\n3,-1,[5 6]\n4,1,[1 1]\n", "src,dst\n1,2\n2,2\n3,4\n")
	f.Add("id,label,x\n\"a\nb\",0,1\nb,1,x\n", "src,dst\n\"a\nb\",b\n")
	f.Fuzz(func(t *testing.T, nodes, edges string) {
		dir := t.TempDir()
		o := opts(writeText(t, dir, "nodes.csv", nodes))
		o.Draw = dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1}
		d, err := Import([]string{writeText(t, dir, "edges.csv", edges)}, o)
		if err != nil {
			var re *RowError
			if errors.As(err, &re) && (re.Row < 1 || re.File == "") {
				t.Fatalf("%v: row %d of %q", err, re.Row, re.File)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("imported an invalid dataset: %v", err)
		}
	})
}

// FuzzImportParquet: any Parquet node table and edge file give a valid
// dataset or an error of one short line, never a panic or a hang.
func FuzzImportParquet(f *testing.F) {
	type node struct {
		ID    string    `parquet:"id"`
		Label int64     `parquet:"label"`
		Emb   []float32 `parquet:"emb,list"`
		Part  string    `parquet:"part,optional"`
	}
	type edge struct {
		Src string `parquet:"src"`
		Dst string `parquet:"dst"`
	}
	var ns []node
	var es []edge
	for i := range 8 {
		id := string(rune('a' + i))
		ns = append(ns, node{ID: id, Label: int64(i % 2), Emb: []float32{float32(i), 1}})
		es = append(es, edge{Src: id, Dst: string(rune('a' + (i+1)%8))})
	}
	var nb, eb bytes.Buffer
	if err := parquet.Write(&nb, ns); err != nil {
		f.Fatal(err)
	}
	if err := parquet.Write(&eb, es); err != nil {
		f.Fatal(err)
	}
	f.Add(nb.Bytes(), eb.Bytes())
	f.Add(nb.Bytes(), eb.Bytes()[:eb.Len()/2])
	f.Fuzz(func(t *testing.T, nodes, edges []byte) {
		dir := t.TempDir()
		np, ep := filepath.Join(dir, "nodes.parquet"), filepath.Join(dir, "edges.parquet")
		if err := os.WriteFile(np, nodes, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ep, edges, 0o644); err != nil {
			t.Fatal(err)
		}
		o := opts(np)
		o.Draw = dataset.SplitOptions{TrainPerClass: 1, Valid: 1, Test: 1}
		d, err := Import([]string{ep}, o)
		if err != nil {
			if msg := strings.ReplaceAll(err.Error(), dir, "DIR"); len(msg) > 3*quote.Limit+300 || strings.Contains(msg, "\n") {
				t.Fatalf("a message of %d bytes or lines: %.600q", len(msg), msg)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("imported an invalid dataset: %v", err)
		}
	})
}

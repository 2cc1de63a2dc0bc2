package edgelist

import (
	"errors"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
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

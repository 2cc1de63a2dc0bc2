package nn

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestTableInputChecks: only a model whose bottom layer reads a feature
// table in place (GraphSAGE without input dropout) takes a batch whose
// features are the table, and the table must be float32 or bfloat16 rows
// of the input width; the others name what is wrong and issue nothing.
func TestTableInputChecks(t *testing.T) {
	be := newCPU(t)
	tb := newTestBatch(t, be, 4, 3, []int{3, 2})
	table := upload(t, be, make([]float32, 20*4))
	cases := []struct {
		cfg   Config
		table backend.Buffer
		reads bool   // ReadsTable
		want  string // "" = accepted
	}{
		{Config{Kind: KindSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2}, table, true, ""},
		{Config{Kind: KindGCN, InDim: 4, Hidden: 8, Classes: 3, Layers: 2}, table, false, "gcn's bottom layer"},
		{Config{Kind: KindSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, InputDropout: 0.5}, table, false, "input dropout 0.5"},
		{Config{Kind: KindSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2}, upload(t, be, make([]int32, 80)), true, "Table is int32"},
		{Config{Kind: KindSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2}, upload(t, be, make([]float32, 81)), true, "not rows of 4"},
	}
	for _, c := range cases {
		m := newTestModel(t, be, c.cfg, tb.caps)
		b := tb.Batch
		b.X, b.Table = nil, c.table
		if got := m.ReadsTable(); got != c.reads {
			t.Errorf("%s, input dropout %v: ReadsTable %t", c.cfg.Kind, c.cfg.InputDropout, got)
		}
		err := m.CheckBatch(&b)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.cfg.Kind, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.cfg.Kind, err, c.want)
		}
	}
}

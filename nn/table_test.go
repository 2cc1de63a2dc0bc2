package nn

import (
	"math"
	"slices"
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

// TestTieredInput: a GraphSAGE bottom layer given its rows in two tiers
// (the cached sources' rows in a cache, the others' in X, the cached rows
// of X poisoned) computes the logits and gradients it computes from every
// row gathered, bit for bit; a model whose bottom layer cannot read them
// in place, or a batch that also gives a table, is refused.
func TestTieredInput(t *testing.T) {
	be := newCPU(t)
	ops, err := backend.TieredOf(be)
	if err != nil {
		t.Fatal(err)
	}
	tb := newTestBatch(t, be, 4, 3, []int{3, 2})
	const dim = 4
	x := readF32(be, tb.X)
	src := download(be, tb.Blocks[0]).srcIDs
	slot := make([]int32, sampleGraph().NumNodes)
	for v := range slot {
		slot[v] = -1
	}
	var cache []float32
	misses := append([]float32(nil), x...)
	for j, v := range src {
		if j%2 == 0 {
			slot[v] = int32(len(cache) / dim)
			cache = append(cache, x[j*dim:(j+1)*dim]...)
			for c := range dim {
				misses[j*dim+c] = float32(math.NaN())
			}
		}
	}
	tiered := tb.Batch
	tiered.X, tiered.Tiered = upload(t, be, misses), &Tiered{Ops: ops, Cache: upload(t, be, cache), Slot: upload(t, be, slot)}
	cfg := Config{Kind: KindSAGE, InDim: dim, Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.3}
	r := backend.Rand{Seed: 5, Clock: tb.clock}
	run := func(b *Batch) ([]uint32, []uint32) {
		m := newTestModel(t, be, cfg, tb.caps)
		out := m.Forward(b, true, r)
		logits := readF32(be, out)
		m.Loss(b, out)
		m.Backward(b)
		syncOK(t, be)
		return bits32(logits), bits32(readF32(be, m.Grads()))
	}
	wantLogits, wantGrads := run(&tb.Batch)
	gotLogits, gotGrads := run(&tiered)
	if !slices.Equal(gotLogits, wantLogits) || !slices.Equal(gotGrads, wantGrads) {
		t.Error("the rows read in two tiers give other logits or gradients than the gathered rows")
	}
	gcn := newTestModel(t, be, Config{Kind: KindGCN, InDim: dim, Hidden: 8, Classes: 3, Layers: 2}, tb.caps)
	if err := gcn.CheckBatch(&tiered); err == nil || !strings.Contains(err.Error(), "gcn's bottom layer") {
		t.Errorf("a GCN model given rows in two tiers: %v", err)
	}
	both := tiered
	both.X, both.Table = nil, upload(t, be, make([]float32, len(slot)*dim))
	if err := newTestModel(t, be, cfg, tb.caps).CheckBatch(&both); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("rows given as a table and in two tiers: %v", err)
	}
}

func bits32(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, f := range v {
		out[i] = math.Float32bits(f)
	}
	return out
}

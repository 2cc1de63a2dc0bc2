package train

import (
	"fmt"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/featstore"
)

// TestTableInput: a GraphSAGE model over a resident table reads its bottom
// rows in place (no gather, no row buffer in the plan) and trains exactly
// as with the rows gathered (Options.GatherRows), eagerly and replayed, from
// float32 and bfloat16 tables; a GCN model, whose bottom layer cannot read
// the table, still gathers.
func TestTableInput(t *testing.T) {
	for _, model := range []string{"sage", "gcn"} {
		for _, dt := range []backend.DType{backend.F32, backend.BF16} {
			tableInputMatchesGather(t, func() backend.Backend { return record.New(cpu.New(2)) }, model, dt, true)
		}
	}
}

// tableInputMatchesGather trains 2 tiny epochs on backends from newBE with
// the rows gathered, then reading the table in place (eagerly and, with
// replay, replayed), and compares losses and parameters bit for bit.
func tableInputMatchesGather(t *testing.T, newBE func() backend.Backend, model string, dt backend.DType, replay bool) {
	t.Helper()
	ds := tinyData(t)
	cfg := tinyModel(t, model)
	cfg.Epochs = 2
	run := func(gather, replay bool) ([]float32, [][]float32, int, bool) {
		be := newBE()
		res, err := featstore.UploadAs(be, ds.Features, ds.FeatDim, dt)
		if err != nil {
			t.Fatal(err)
		}
		store := &rowsLog{Resident: res}
		var losses []float32
		tr, err := New(be, ds, cfg, Options{Features: store, GatherRows: gather, Mode: modeOf(replay),
			OnStep: func(_, _ int, l float32) { losses = append(losses, l) }})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		runTrainer(t, tr, replay)
		return losses, params(t, tr), len(store.outs), tr.plan.X == nil
	}
	wantLoss, wantParams, _, _ := run(true, false)
	modes := []bool{false}
	if replay {
		modes = append(modes, true)
	}
	for _, replay := range modes {
		what := fmt.Sprintf("%s, %s table, replay %t", model, dt, replay)
		gotLoss, gotParams, outs, noRows := run(false, replay)
		if reads := model == "sage"; noRows != reads || (outs == 0) != reads {
			t.Errorf("%s: plan without rows %t, %d row buffers gathered into; want in place %t", what, noRows, outs, reads)
		}
		sameRun(t, what+": against the gathered rows", gotLoss, wantLoss, gotParams, wantParams)
	}
}

// TestBF16Rows: a GAT model, whose aggregate-first bottom layer reads
// bfloat16 rows (nn.Model.ReadsBF16Rows), over a bfloat16 resident table
// gathers its rows as they are (the plan's rows bfloat16, half the bytes)
// and trains bit for bit as over a float32 table of the same values, eagerly
// and replayed; with a float32 table its rows stay float32.
func TestBF16Rows(t *testing.T) {
	bf16RowsMatch(t, func() backend.Backend { return record.New(cpu.New(2)) })
}

// bf16RowsMatch runs TestBF16Rows on backends from newBE.
func bf16RowsMatch(t *testing.T, newBE func() backend.Backend) {
	t.Helper()
	ds := tinyData(t)
	cfg := tinyModel(t, "gat")
	cfg.Epochs = 2
	rounded := *ds
	rounded.Features = make([]float32, len(ds.Features))
	for i, v := range backend.ToBF16(ds.Features) {
		rounded.Features[i] = backend.BF16Float(v)
	}
	run := func(dt backend.DType, replay bool) ([]float32, [][]float32) {
		var losses []float32
		tr, err := New(newBE(), &rounded, cfg, Options{FeatureDType: dt, Mode: modeOf(replay),
			OnStep: func(_, _ int, l float32) { losses = append(losses, l) }})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		runTrainer(t, tr, replay)
		if tr.plan.X == nil || tr.plan.X.DType() != dt {
			t.Fatalf("%s table, replay %t: the plan's rows are %v, want %s", dt, replay, tr.plan.X, dt)
		}
		return losses, params(t, tr)
	}
	for _, replay := range []bool{false, true} {
		wantLoss, wantParams := run(backend.F32, replay)
		gotLoss, gotParams := run(backend.BF16, replay)
		sameRun(t, fmt.Sprintf("bfloat16 rows, replay %t: against float32 rows", replay), gotLoss, wantLoss, gotParams, wantParams)
	}
}

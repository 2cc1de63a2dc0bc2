package train

import (
	"context"
	"fmt"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/featstore"
)

// tieredLog is a tiered store that counts its calls of each gather.
type tieredLog struct {
	*featstore.Tiered
	gathers, misses int
}

func (s *tieredLog) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	s.gathers++
	s.Tiered.Gather(ids, n, out)
}

func (s *tieredLog) GatherMisses(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	s.misses++
	s.Tiered.GatherMisses(ids, n, out)
}

// TestTieredInPlace: a GraphSAGE model over a tiered store reads the cached
// rows in place and gathers only the misses (no call of the store's whole
// gather), and trains exactly as with every row gathered
// (Options.GatherRows): the same losses, parameters and host and total row
// counts, eagerly and replayed (the cache filled before the capture, as the
// hybrid driver fills it), float32 and bfloat16 tiers, with no row, half
// the rows or every row cached.
func TestTieredInPlace(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyModel(t, "sage")
	cfg.Epochs = 2
	order := make([]int32, ds.Graph.NumNodes)
	for i := range order {
		order[i] = int32((int64(i) * 7919) % ds.Graph.NumNodes) // 7919 is prime, N a power of two
	}
	type result struct {
		losses          []float32
		params          [][]float32
		host, all       int64
		gathers, misses int
	}
	run := func(dt backend.DType, cached int, gather, replay bool) result {
		be := record.New(cpu.New(2))
		st, err := featstore.NewTiered(be, ds.Features, ds.FeatDim, order, dt)
		if err != nil {
			t.Fatal(err)
		}
		store := &tieredLog{Tiered: st}
		var r result
		tr, err := New(be, ds, cfg, Options{Features: store, GatherRows: gather, Mode: modeOf(replay),
			OnStep: func(_, _ int, l float32) { r.losses = append(r.losses, l) }})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		fill := func(EnvelopeReport) error { return st.Fill(cached) }
		if replay {
			_, _, err = tr.RunReplay(context.Background(), ReplayOptions{BeforeCapture: fill})
		} else if err = fill(EnvelopeReport{}); err == nil {
			_, err = tr.Run(context.Background())
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.host, r.all, err = st.Stats(); err != nil {
			t.Fatal(err)
		}
		r.params, r.gathers, r.misses = params(t, tr), store.gathers, store.misses
		return r
	}
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		for _, cached := range []int{0, int(ds.Graph.NumNodes) / 2, int(ds.Graph.NumNodes)} {
			for _, replay := range []bool{false, true} {
				what := fmt.Sprintf("%s tiers, %d rows cached, replay %t", dt, cached, replay)
				want := run(dt, cached, true, replay)
				got := run(dt, cached, false, replay)
				if want.misses != 0 || want.gathers == 0 || got.gathers != 0 || got.misses == 0 {
					t.Errorf("%s: gathered path %d gathers and %d miss gathers, in place %d and %d; want gathers only, then miss gathers only",
						what, want.gathers, want.misses, got.gathers, got.misses)
				}
				if got.host != want.host || got.all != want.all || (cached == 0) != (got.host == got.all) {
					t.Errorf("%s: %d host rows of %d in place, %d of %d gathered", what, got.host, got.all, want.host, want.all)
				}
				sameRun(t, what+": in place against the gathered rows", got.losses, want.losses, got.params, want.params)
			}
		}
	}
}

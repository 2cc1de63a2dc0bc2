package train

import (
	"context"
	"fmt"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
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
	tieredMatchesGather(t, func() backend.Backend { return record.New(cpu.New(2)) })
}

// TestTieredInPlaceCUDA is TestTieredInPlace on the GPU, with the
// deterministic aggregation backward.
func TestTieredInPlaceCUDA(t *testing.T) {
	openCUDA(t) // skips without a device
	tieredMatchesGather(t, func() backend.Backend { return openCUDAWith(t, cuda.Options{Deterministic: true}) })
}

// tieredMatchesGather trains 2 tiny epochs over a tiered store on backends
// from newBE, the rows gathered, then the cached rows read in place, and
// compares what TestTieredInPlace says.
func tieredMatchesGather(t *testing.T, newBE func() backend.Backend) {
	ds := tinyData(t)
	cfg := tinyModel(t, "sage")
	cfg.Epochs = 2
	order := make([]int32, ds.Graph.NumNodes)
	for i := range order {
		order[i] = int32((int64(i) * 7919) % ds.Graph.NumNodes) // 7919 is prime, N a power of two
	}
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		for _, cached := range []int{0, int(ds.Graph.NumNodes) / 2, int(ds.Graph.NumNodes)} {
			for _, replay := range []bool{false, true} {
				what := fmt.Sprintf("%s tiers, %d rows cached, replay %t", dt, cached, replay)
				c := tieredCase{ds: ds, cfg: cfg, order: order, dt: dt, cached: cached, replay: replay}
				want := c.run(t, newBE(), true)
				got := c.run(t, newBE(), false)
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

// tieredCase is one training run of tieredMatchesGather.
type tieredCase struct {
	ds     *dataset.Dataset
	cfg    Config
	order  []int32
	dt     backend.DType
	cached int
	replay bool
}

// tieredResult is what a tieredCase's run gives.
type tieredResult struct {
	losses          []float32
	params          [][]float32
	host, all       int64 // the store's counts: host rows, all rows
	gathers, misses int   // calls of Gather and GatherMisses
}

// run trains c on be, every row gathered or the cached ones read in place.
func (c tieredCase) run(t *testing.T, be backend.Backend, gather bool) tieredResult {
	t.Helper()
	st, err := featstore.NewTiered(be, c.ds.Features, c.ds.FeatDim, c.order, c.dt)
	if err != nil {
		t.Fatal(err)
	}
	store := &tieredLog{Tiered: st}
	var r tieredResult
	tr, err := New(be, c.ds, c.cfg, Options{Features: store, GatherRows: gather, Mode: modeOf(c.replay),
		OnStep: func(_, _ int, l float32) { r.losses = append(r.losses, l) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	fill := func(EnvelopeReport) error { return st.Fill(c.cached) }
	if c.replay {
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

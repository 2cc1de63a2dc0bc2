package hybrid

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

func tiny(t *testing.T) (*dataset.Dataset, train.Config) { return traintest.Tiny(t) }

func TestPlace(t *testing.T) {
	const mb = 1 << 20
	p, err := Place(1000*mb, 300*mb, 100*mb, 100*mb, 512, 10_000_000, -1)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(600*mb) / 512; p.CacheRows != want || p.HostRows != 10_000_000-want {
		t.Errorf("cache %d host %d rows, want %d and %d", p.CacheRows, p.HostRows, want, 10_000_000-want)
	}
	if p.Peak() > p.Budget {
		t.Errorf("planned peak %d over the budget %d", p.Peak(), p.Budget)
	}
	if p, _ := Place(1000*mb, 300*mb, 100*mb, 100*mb, 512, 1000, -1); p.CacheRows != 1000 || p.HostRows != 0 {
		t.Errorf("everything fits: cache %d host %d", p.CacheRows, p.HostRows)
	}
	if p, _ := Place(1000*mb, 300*mb, 100*mb, 100*mb, 512, 1000, 0); p.CacheRows != 0 || p.HostRows != 1000 {
		t.Errorf("cache-rows 0: cache %d host %d", p.CacheRows, p.HostRows)
	}
	_, err = Place(300*mb, 290*mb, 100*mb, 100*mb, 512, 1000, -1)
	if err == nil || !strings.Contains(err.Error(), "at least 390.0 MiB") {
		t.Errorf("a budget below the resident data: %v", err)
	}
	_, err = Place(1000*mb, 300*mb, 100*mb, 100*mb, 512, 10_000_000, 5_000_000)
	if err == nil || !strings.Contains(err.Error(), "cache-rows") {
		t.Errorf("a cache larger than the budget: %v", err)
	}
}

// TestHybridMatchesReplay: on the CPU (the record backend standing in for
// a GPU), hybrid with the whole table cached, a part of it, or none, trains
// bitwise as the replay driver with the table resident, and the counters
// see the tiers: hit rate 1, in between, 0.
func TestHybridMatchesReplay(t *testing.T) {
	ds, cfg := tiny(t)
	hybridMatchesReplay(t, ds, cfg, []cacheCase{{-1, 1, 1, false}, {2000, 0.05, 0.99, false}, {0, 0, 0, false}})
}

// TestGATHybridMatchesReplay: the same for GAT (a model the driver knows
// nothing about), with part of the table cached.
func TestGATHybridMatchesReplay(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Model, cfg.Heads, cfg.AttnDropout, cfg.Epochs = "gat", 4, 0.3, 1
	hybridMatchesReplay(t, ds, cfg, []cacheCase{{2000, 0.05, 0.99, false}})
}

// TestFetchAheadMatchesReplay: with the host tier's rows gathered a step
// ahead (Options.FetchAhead: the replay driver's fetch beside the step
// before, into the next plan's own rows), the hybrid run still gives
// replay's losses bit for bit, with part of the table cached and with
// none.
func TestFetchAheadMatchesReplay(t *testing.T) {
	ds, cfg := tiny(t)
	hybridMatchesReplay(t, ds, cfg, []cacheCase{{2000, 0.05, 0.99, true}, {0, 0, 0, true}})
	// The fetch went beside the step: the next plan had rows of its own.
	peak := func(ahead bool) int64 {
		_, st, err := Run(context.Background(), record.New(cpu.New(1)), ds, cfg, train.Options{}, Options{CacheRows: 2000, FetchAhead: ahead})
		if err != nil {
			t.Fatal(err)
		}
		return st.PeakBytes
	}
	if in, ahead := peak(false), peak(true); ahead <= in {
		t.Errorf("peak %d bytes fetching ahead, %d not: the next plan has no rows of its own", ahead, in)
	}
}

// cacheCase is a cache size, the range its hit rate must fall in, and
// whether the rows are fetched a step ahead.
type cacheCase struct {
	rows     int64
	min, max float64
	ahead    bool
}

// hybridMatchesReplay trains cfg with the replay driver, then with the
// hybrid driver at each cache size, and requires the same losses bitwise.
func hybridMatchesReplay(t *testing.T, ds *dataset.Dataset, cfg train.Config, cases []cacheCase) {
	t.Helper()
	want := replayLosses(t, ds, cfg)
	for _, c := range cases {
		t.Run(fmt.Sprint(c.rows, "/ahead=", c.ahead), func(t *testing.T) {
			var got []float32
			var log strings.Builder
			_, st, err := Run(context.Background(), record.New(cpu.New(1)), ds, cfg,
				train.Options{OnStep: func(_, _ int, l float32) { got = append(got, l) }}, Options{CacheRows: c.rows, FetchAhead: c.ahead, Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d steps, replay %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("step %d: loss %v, replay %v", i, got[i], want[i])
				}
			}
			if st.Rows == 0 || st.HitRate < c.min || st.HitRate > c.max {
				t.Errorf("cache rows %d: hit rate %.3f over %d rows, want in [%g, %g]", c.rows, st.HitRate, st.Rows, c.min, c.max)
			}
			if !strings.Contains(log.String(), "feature cache:") {
				t.Errorf("no plan printed:\n%s", log.String())
			}
			t.Logf("cache %d rows: hit rate %.3f, %d host rows of %d", st.Placement.CacheRows, st.HitRate, st.HostRows, st.Rows)
		})
	}
}

// TestBF16Features: bfloat16 features train tiny as well as float32 (within
// a point of test accuracy), and hybrid over bfloat16 tiers equals replay
// over a bfloat16 table bitwise.
func TestBF16Features(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Epochs = 10
	acc := map[backend.DType]float64{}
	var replay []float32
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		var l []float32
		tr, err := train.New(record.New(cpu.New(2)), ds, cfg, train.Options{Mode: train.Replay, FeatureDType: dt, OnStep: func(_, _ int, v float32) { l = append(l, v) }})
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := tr.RunReplay(context.Background(), train.ReplayOptions{})
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		acc[dt] = s.Test[train.MetricAcc]
		replay = l
	}
	t.Logf("tiny, 10 epochs: test accuracy %.4f with float32 features, %.4f with bfloat16", acc[backend.F32], acc[backend.BF16])
	if !(math.Abs(acc[backend.F32]-acc[backend.BF16]) <= 0.01) {
		t.Errorf("bfloat16 features move test accuracy by %.2f points", 100*(acc[backend.BF16]-acc[backend.F32]))
	}
	var hyb []float32
	_, st, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg,
		train.Options{OnStep: func(_, _ int, v float32) { hyb = append(hyb, v) }}, Options{CacheRows: 2000, FeatureDType: backend.BF16})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hyb, replay) {
		t.Fatal("hybrid over bfloat16 tiers differs from replay over a bfloat16 table")
	}
	if st.HitRate <= 0 || st.HitRate >= 1 {
		t.Errorf("hit rate %.3f", st.HitRate)
	}
}

// hybridRun trains cfg on ds with the hybrid driver on the CPU (the
// record backend standing in for a GPU) with cache rows of the table
// cached, the features held as dt (0: as the dataset holds them) and hot
// vertices as hot says (computed on a CPU backend of their own; the plan
// names them), and returns every step's loss and the figures.
func hybridRun(t *testing.T, ds *dataset.Dataset, cfg train.Config, cache int64, dt backend.DType, hot HotOptions) ([]float32, *Stats) {
	t.Helper()
	var losses []float32
	var log strings.Builder
	hot.NewCPU = func() (backend.Backend, error) { return cpu.New(2), nil }
	topt := train.Options{OnStep: func(_, _ int, l float32) { losses = append(losses, l) }}
	_, st, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg, topt, Options{CacheRows: cache, FeatureDType: dt, Hot: hot, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if hot.Ratio > 0 && !strings.Contains(log.String(), "hot vertices:") {
		t.Errorf("the plan does not name the hot vertices:\n%s", log.String())
	}
	return losses, st
}

// TestBF16Dataset: a dataset holding bfloat16 features trains in the
// hybrid mode, its tiers bfloat16 by default (2 bytes a row value over
// PCIe), bitwise as the float32 dataset held as bfloat16; with hot
// vertices, whose rows the CPU computes from the dataset's own values,
// bitwise as the float32 dataset of the same (widened) values held as
// bfloat16; held as float32 (widened), bitwise as that float32 dataset.
func TestBF16Dataset(t *testing.T) {
	f32, cfg := tiny(t)
	cfg.Epochs = 1
	bf16 := *f32
	bf16.RoundFeatures()
	widened := bf16
	widened.WidenFeatures()
	none := HotOptions{}
	got, st := hybridRun(t, &bf16, cfg, 2000, 0, none)
	want, _ := hybridRun(t, f32, cfg, 2000, backend.BF16, none)
	if !slices.Equal(got, want) {
		t.Fatalf("bfloat16 dataset:\n%v\nfloat32 dataset held as bfloat16:\n%v", got, want)
	}
	if st.HostRows == 0 || st.PCIeBytes != st.HostRows*int64(f32.FeatDim)*2 {
		t.Errorf("%d bytes over PCIe for %d host rows of %d features: the host tier is not bfloat16", st.PCIeBytes, st.HostRows, f32.FeatDim)
	}
	if plain, _ := hybridRun(t, f32, cfg, 2000, backend.F32, none); slices.Equal(plain, got) {
		t.Fatal("float32 features train as bfloat16 ones: the comparison cannot tell them apart")
	}
	hot := HotOptions{Ratio: 0.1, Staleness: 1, SuperBatch: 4}
	got, st = hybridRun(t, &bf16, cfg, 2000, 0, hot)
	want, _ = hybridRun(t, &widened, cfg, 2000, backend.BF16, hot)
	if st.Hot == nil || !slices.Equal(got, want) {
		t.Fatalf("hot vertices (%v): bfloat16 dataset\n%v\nwidened dataset held as bfloat16\n%v", st.Hot != nil, got, want)
	}
	got, _ = hybridRun(t, &bf16, cfg, 2000, backend.F32, none)
	want, _ = hybridRun(t, &widened, cfg, 2000, backend.F32, none)
	if !slices.Equal(got, want) {
		t.Fatalf("held as float32: bfloat16 dataset\n%v\nwidened dataset\n%v", got, want)
	}
}

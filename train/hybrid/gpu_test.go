package hybrid

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/internal/tolerance"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

func losses(t *testing.T, run func(train.Options) error) []float32 {
	var l []float32
	if err := run(train.Options{OnStep: func(_, _ int, v float32) { l = append(l, v) }}); err != nil {
		t.Fatal(err)
	}
	return l
}

// cpuBound holds a run on the GPU (traintest.GPU: the deterministic path,
// 3xTF32 products) to the CPU's run of the same schedule, relative loss
// difference over 20 tiny steps. Measured: 7.8e-7 for hybrid with a
// partial cache (H200, TestHybridCUDA), 7.8e-7 and 7.1e-7 for fresh hot
// rows as inputs and as outputs (H100, TestHotCUDA; docs/perf.md): 5e-6 is
// 6.4x the larger.
const cpuBound = 5e-6

// followsCPU holds the GPU run's losses to the CPU's within cpuBound (a
// NaN or an infinity failing), logs the measured relative error and
// returns it.
func followsCPU(t testing.TB, what string, onGPU, onCPU []float32) float64 {
	t.Helper()
	worst, err := tolerance.Losses(onGPU, onCPU, tolerance.Every(cpuBound))
	if err != nil {
		t.Fatalf("%s, GPU against CPU: %v", what, err)
	}
	t.Logf("%s, GPU against CPU: %d steps, measured relative error %.2g at most", what, len(onCPU), worst)
	return worst
}

// TestFollowsCPURejectsNaN: a NaN or an infinity in either run fails
// followsCPU (on any machine: the check must not wait for a GPU to be
// shown), and equal runs pass.
func TestFollowsCPURejectsNaN(t *testing.T) {
	want := []float32{2.1, 1.9, 1.7, 1.6}
	if msg, failed := tolerance.Fails(func(tb testing.TB) { followsCPU(tb, "equal", want, want) }); failed {
		t.Errorf("equal runs fail: %s", msg)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for step := range want {
			bad := slices.Clone(want)
			bad[step] = float32(v)
			if _, failed := tolerance.Fails(func(tb testing.TB) { followsCPU(tb, "planted", bad, want) }); !failed {
				t.Errorf("%v at step %d of the GPU's run: passed", v, step)
			}
			if _, failed := tolerance.Fails(func(tb testing.TB) { followsCPU(tb, "planted", want, bad) }); !failed {
				t.Errorf("%v at step %d of the CPU's run: passed", v, step)
			}
		}
	}
}

// TestHybridCUDA: on a GPU, hybrid with a partial cache (host rows read
// over PCIe in place: from the band, without one, and fetched a step
// ahead) equals the all-resident replay run bitwise (the deterministic
// path), and follows the CPU's hybrid run (cpuBound).
func TestHybridCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := tiny(t)
	replay := replayOn(t, gpu, ds, cfg)
	for _, c := range []struct {
		what string
		opt  Options
	}{{"band", Options{CacheRows: 2000}}, {"no band", Options{CacheRows: 2000, Band: -1}}, {"band, fetched ahead", Options{CacheRows: 2000, FetchAhead: true}}} {
		var st *Stats
		hyb := losses(t, func(o train.Options) error {
			var err error
			_, st, err = Run(context.Background(), gpu, ds, cfg, o, c.opt)
			return err
		})
		if len(hyb) != len(replay) {
			t.Fatalf("%s: steps: hybrid %d, replay %d", c.what, len(hyb), len(replay))
		}
		for i := range hyb {
			if hyb[i] != replay[i] {
				t.Fatalf("%s: step %d: hybrid %v, replay %v", c.what, i, hyb[i], replay[i])
			}
		}
		if want := st.Placement.HostRows; c.opt.Band < 0 && st.Placement.BandRows != 0 || c.opt.Band == 0 && (st.Placement.BandRows != want || want == 0) {
			t.Fatalf("%s: %d rows in the band of %d host rows", c.what, st.Placement.BandRows, want)
		}
		t.Logf("%s: hit rate %.3f", c.what, st.HitRate)
		if !(st.HitRate > 0 && st.HitRate < 1) {
			t.Fatalf("%s: hit rate %.3f with 2000 of 16384 rows cached", c.what, st.HitRate)
		}
	}
	onCPU := losses(t, func(o train.Options) error {
		_, _, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg, o, Options{CacheRows: 2000})
		return err
	})
	followsCPU(t, "hybrid", replay, onCPU)
}

// TestTypedHybridCUDA: on a GPU, a typed run (hetero-tiny: the papers'
// and fields' tiers, the other types' learned rows resident) with a
// quarter of the rows cached, the rest read over PCIe in place, equals the
// typed replay run with every table resident bitwise (the deterministic
// path).
func TestTypedHybridCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := heteroTiny(t)
	replay := replayOn(t, gpu, ds, cfg)
	hyb, st, _ := hybridOn(t, gpu, ds, cfg, Options{CacheRows: 800})
	if !slices.Equal(hyb, replay) {
		t.Fatalf("typed hybrid:\n%v\ntyped replay:\n%v", hyb, replay)
	}
	t.Logf("hit rate %.3f, %+v", st.HitRate, st.Placement.Types)
	if !(st.HitRate > 0 && st.HitRate < 1) {
		t.Fatalf("hit rate %.3f with 800 of %d rows cached", st.HitRate, st.Placement.Rows)
	}
}

// TestHotCUDA: on a GPU, hybrid with CPU-computed hot vertices (the host
// table read in place, the bottom hop masked on the device; as inputs
// added before layer 0's product, or as outputs whose gradient is
// collected on the device) follows the CPU's run of the same schedule
// (cpuBound) when the rows are fresh (one step per super-batch, staleness
// 0); with stale rows the pipelined schedule equals the sequential one
// bitwise on the GPU too. (Stale rows make the training
// dynamics amplify the last-bit differences between GPU and CPU: measured
// 3e-6 after 8 steps, 2e-4 after 20, docs/perf.md.)
func TestHotCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := tiny(t)
	run := func(be backend.Backend, h HotOptions) ([]float32, *Stats) {
		h.NewCPU = func() (backend.Backend, error) { return cpu.New(2), nil }
		var st *Stats
		l := losses(t, func(o train.Options) error {
			var err error
			_, st, err = Run(context.Background(), be, ds, cfg, o, Options{CacheRows: 2000, Hot: h})
			return err
		})
		return l, st
	}
	for _, outputs := range []bool{false, true} {
		fresh := HotOptions{Ratio: 0.1, Staleness: 0, SuperBatch: 1, Outputs: outputs}
		onGPU, st := run(gpu, fresh)
		onCPU, _ := run(record.New(cpu.New(2)), fresh)
		followsCPU(t, fmt.Sprintf("outputs %t: fresh hot rows", outputs), onGPU, onCPU)
		t.Logf("outputs %t: %d hot vertices, %d super-batches, %d gradients", outputs, st.Hot.Vertices, st.Hot.SuperBatches, st.Hot.Gradients)
		stale := HotOptions{Ratio: 0.1, Staleness: 1, SuperBatch: 4, Sequential: true, Outputs: outputs}
		ref, _ := run(gpu, stale)
		stale.Sequential = false
		if got, _ := run(gpu, stale); !slices.Equal(got, ref) {
			t.Fatalf("outputs %t: on the GPU the pipelined schedule differs from the sequential one", outputs)
		}
	}
}

// TestChooseHotRatioCUDA: on a GPU the trials of --hot-ratio auto leave
// no device memory behind (each trial's trainer frees its graph, tables,
// plan and model), so every trial and the run after them plan against
// the same free memory.
func TestChooseHotRatioCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := tiny(t)
	cfg.Batch = 32
	m := backend.MemoryOf(gpu)
	before := m.InUseBytes()
	opt := Options{CacheRows: 3000, Hot: HotOptions{Staleness: 1, SuperBatch: 2, NewCPU: func() (backend.Backend, error) { return cpu.New(2), nil }}}
	trials, err := ChooseHotRatio(context.Background(), gpu, ds, cfg, &opt, []float64{0, 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if after := m.InUseBytes(); after != before {
		t.Errorf("device memory in use: %d bytes before the trials, %d after", before, after)
	}
	t.Logf("trials %+v: chose %g", trials, opt.Hot.Ratio)
}

// TestHostListsCUDA: on a GPU, sampling through the host topology (lists
// in pinned, mapped host memory read over PCIe, the highest degrees' in
// device memory) draws what the CPU sampler draws from the CSR, and counts
// each read under its tier (checkHostLists).
func TestHostListsCUDA(t *testing.T) { checkHostLists(t, traintest.GPU(t)) }

// TestHostTopologyCUDA: on a GPU, a run whose lists are split between
// device and host memory under a budget trains bitwise as the replay run
// with the whole graph resident (the deterministic path), follows the
// CPU's run, reads lists from both tiers and keeps its measured peak in
// the budget.
func TestHostTopologyCUDA(t *testing.T) {
	gpu := traintest.GPU(t)
	ds, cfg := tiny(t)
	replay := replayOn(t, gpu, ds, cfg)
	// Every list in device memory first: what is resident before them.
	var st *Stats
	onCPU := losses(t, func(o train.Options) error {
		_, _, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg, o, Options{Topology: TopologyHost, CacheRows: -1})
		return err
	})
	losses(t, func(o train.Options) error {
		var err error
		_, st, err = Run(context.Background(), gpu, ds, cfg, o, Options{Topology: TopologyHost, CacheRows: -1})
		return err
	})
	tp := st.Placement.Topology
	const margin = 1 << 20
	budget := st.Placement.Resident - tp.GPUListBytes() + margin + tp.ListBytes() // half the lists' bytes for lists
	backend.MemoryOf(gpu).ResetPeak()                                             // this run's peak, not the earlier runs'
	hyb := losses(t, func(o train.Options) error {
		var err error
		_, st, err = Run(context.Background(), gpu, ds, cfg, o, Options{Topology: TopologyHost, Budget: budget, Margin: margin, CacheRows: -1})
		return err
	})
	if !slices.Equal(hyb, replay) {
		t.Fatalf("host topology:\n%v\nreplay, the whole graph resident:\n%v", hyb, replay)
	}
	followsCPU(t, "host topology", hyb, onCPU)
	tp = st.Placement.Topology
	if r := st.Lists; tp.GPULists == 0 || tp.GPULists == tp.Vertices || r == nil || r.Local == 0 || r.Host == 0 {
		t.Errorf("%d of %d lists in device memory, reads %+v: want some of each", tp.GPULists, tp.Vertices, r)
	}
	if st.PeakBytes > budget {
		t.Errorf("measured peak %d over the budget %d", st.PeakBytes, budget)
	}
	t.Logf("lists in device memory: %d of %d (%d of %d edges); reads %+v; peak %d of %d", tp.GPULists, tp.Vertices, tp.GPUEdges, tp.Edges, *st.Lists, st.PeakBytes, budget)
}

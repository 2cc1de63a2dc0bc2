package simulate

import (
	"math"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
)

// ring is a dataset of a ring of n vertices (each joined to the next and
// the one before), every vertex a training seed.
func ring(n int) *dataset.Dataset {
	g := &graph.CSR{NumNodes: int64(n), Indptr: make([]int64, n+1), Indices: make([]int32, 0, 2*n)}
	for v := range n {
		g.Indices = append(g.Indices, int32((v+n-1)%n), int32((v+1)%n))
		g.Indptr[v+1] = int64(2 * (v + 1))
	}
	train := make([]int64, n)
	for i := range train {
		train[i] = int64(i)
	}
	return &dataset.Dataset{Name: "ring", Graph: g, FeatDim: 1, Train: train}
}

// TestCheckSize: ranks and rank-steps within the limits pass; fewer than
// one host, device or step, more ranks than MaxRanks (values whose
// product overflows included) and more rank-steps than MaxRankSteps are
// refused, naming the values.
func TestCheckSize(t *testing.T) {
	for _, ok := range [][3]int{{1, 1, 1}, {8, 8, 20}, {512, 8, MaxRankSteps / MaxRanks}, {1, 1, MaxRankSteps}} {
		if err := CheckSize(ok[0], ok[1], ok[2]); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, c := range []struct {
		size [3]int
		want string
	}{
		{[3]int{0, 1, 1}, "hosts: 0"}, {[3]int{1, -1, 1}, "devices: -1"}, {[3]int{1, 1, 0}, "steps: 0"},
		{[3]int{513, 8, 1}, "513 x 8 ranks, more than the 4096"},
		{[3]int{1 << 40, 1 << 40, 1}, "1099511627776 x 1099511627776 ranks"},
		{[3]int{512, 8, MaxRankSteps/MaxRanks + 1}, "257 steps of 4096 ranks"},
		{[3]int{1, 1, math.MaxInt}, "rank-steps"},
	} {
		if err := CheckSize(c.size[0], c.size[1], c.size[2]); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.size, err, c.want)
		}
	}
}

// TestBudgetRefusedBeforeSampling: a job whose envelope would sample
// more than MaxSampledEdges edges, or hold more than MaxHeldBytes of
// rows, is refused by Run naming the figure and the flags to lower, and
// by Scaling before it simulates any scale (done never called).
func TestBudgetRefusedBeforeSampling(t *testing.T) {
	ds := ring(1 << 20)
	r := NewRunner(ds)
	// All neighbours over 4 hops of a ring, by the envelope: a seed's
	// sources triple each hop, so 4096 ranks of 2^12 seeds hold up to
	// 81·2^12 rows each, 10 GiB of ids in all.
	cfg := Config{Hosts: 512, Devices: 8, Batch: 4096 << 12, Fanouts: []int{-1, -1, -1, -1}, Steps: 1, Seed: 1}
	if _, err := r.Run(cfg); err == nil || !strings.Contains(err.Error(), "GiB of input rows at once") || !strings.Contains(err.Error(), "--batch") {
		t.Errorf("rows held: %v", err)
	}
	// 64 ranks of 2^8 seeds over 2^14 steps: 80 edges per seed by the
	// envelope, 2e10 edges in all.
	cfg.Hosts, cfg.Batch, cfg.Steps = 8, 64<<8, MaxRankSteps/64
	if _, err := r.Run(cfg); err == nil || !strings.Contains(err.Error(), "edges (the sampler's envelope for fanouts -1,-1,-1,-1)") {
		t.Errorf("edges sampled: %v", err)
	}
	cfg.Hosts, cfg.Devices, cfg.Batch, cfg.Steps = 1, 2, 2<<8, MaxRankSteps/64
	m := &Model{Step: H100ProductsSim(), Links: DefaultLinks(), ParamBytes: 1}
	ran := 0
	_, err := r.Scaling(cfg, false, m, []Scale{{1, 2}, {1, 4}, {8, 8}}, func(Scale, *Result) { ran++ })
	if err == nil || !strings.Contains(err.Error(), "8x8 devices") || ran != 0 {
		t.Errorf("ladder: %v after %d simulations, want an error naming 8x8 before any", err, ran)
	}
}

// TestLinksCheck: every link a prediction divides by must be a finite
// bandwidth above 0, latencies and counts finite and at least 0, the
// overlap a share in [0, 1]; Predict refuses such links instead of
// predicting NaN or +Inf.
func TestLinksCheck(t *testing.T) {
	if err := DefaultLinks().Check(); err != nil {
		t.Fatal(err)
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		set  func(*Links)
		want string
	}{
		{func(l *Links) { l.NetGBs = 0 }, "net-gbps: 0"},
		{func(l *Links) { l.NVLinkGBs = nan }, "nvlink-gbs: NaN"},
		{func(l *Links) { l.PCIeGBs = -inf }, "pcie-gbs: -Inf"},
		{func(l *Links) { l.CollectiveUs = -1 }, "collective-us: -1"},
		{func(l *Links) { l.NetCollectiveUs = inf }, "net-collective-us: +Inf"},
		{func(l *Links) { l.Collectives = -2 }, "collectives: -2"},
		{func(l *Links) { l.Overlap = 1.5 }, "overlap: 1.5"},
		{func(l *Links) { l.Overlap = nan }, "overlap: NaN"},
	} {
		l := DefaultLinks()
		c.set(&l)
		if err := l.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", l, err, c.want)
		}
		m := &Model{Step: H100ProductsSim(), Links: l, ParamBytes: 1 << 20}
		if p, err := m.Predict(productsSim(16, 1024)); err == nil {
			t.Errorf("%+v: predicted %+v", l, p)
		}
	}
}

// TestStepTimesCheck: times that are not finite values above 0, and
// batches below one seed, are refused.
func TestStepTimesCheck(t *testing.T) {
	for _, ms := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		st := StepTimes{Batch: []int{256, 512}, Ms: []float64{0.2, ms}}
		if err := st.Check(); err == nil || !strings.Contains(err.Error(), "512:") {
			t.Errorf("%v ms: %v", ms, err)
		}
	}
	if err := (StepTimes{Batch: []int{0, 512}, Ms: []float64{0.2, 0.3}}).Check(); err == nil {
		t.Error("a batch of 0 seeds accepted")
	}
}

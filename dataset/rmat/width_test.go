package rmat

import (
	"math"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/internal/proxy"
)

// papersAt is papers-sim shrunk to 2^scale vertices (its average degree and
// classes kept; half the labelled vertices train, a tenth validate) with
// features width wide.
func papersAt(t *testing.T, scale, width int) Preset {
	t.Helper()
	p, err := Lookup("papers-sim")
	if err != nil {
		t.Fatal(err)
	}
	p.Pairs >>= p.Scale - scale
	p.Scale, p.FeatDim = scale, width
	p.NumTrain, p.NumValid, p.NumTest, p.TrainFrac, p.ValidFrac = 0, 0, 0, 0.5, 0.1
	return p
}

// TestWideFeaturesKeepTheSignal: features made 10x wider than a preset's
// own width (fanout train --feat-dim) must not make its task harder to
// learn. The proxy is the nearest class mean over the mean of the
// neighbours' features, fitted on the training vertices: the same graph,
// labels and split at width 128 and 1280 (features have their own random
// stream). When the centroids' distance was spread over the wider rows,
// every column kept a third of its signal and the fitted means drowned in
// the extra columns' noise: 0.247 at 1280 against 0.287 at 128.
func TestWideFeaturesKeepTheSignal(t *testing.T) {
	acc := map[int]float64{}
	for _, w := range []int{128, 1280} {
		ds, err := Generate(papersAt(t, 14, w), Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		acc[w] = proxy.CentroidAccuracy(ds, proxy.NeighbourMean(ds.Graph, ds.Features, w), w)
	}
	t.Logf("nearest class mean over the neighbour mean: width 128 %.3f, width 1280 %.3f", acc[128], acc[1280])
	if acc[1280] < acc[128]-0.02 {
		t.Fatalf("width 1280 reads labels at %.3f, width 128 at %.3f: the wider table carries less signal per column", acc[1280], acc[128])
	}
}

// TestCentroidsKeepTheirEntries: a preset widened keeps each centroid
// entry's magnitude (Signal/sqrt(2·SignalDim)); a preset without SignalDim
// spreads Signal over its own width.
func TestCentroidsKeepTheirEntries(t *testing.T) {
	p, _ := Lookup("papers-sim")
	narrow := p.Signal / math.Sqrt(2*128)
	p.FeatDim = 1280
	cases := []struct {
		p    Preset
		want float64
	}{
		{p, narrow},
		{Preset{FeatDim: 1280, Signal: 8}, 8 / math.Sqrt(2*1280)},
	}
	for _, c := range cases {
		cent := centroids(3, c.p.FeatDim, c.p.signalDim(), c.p.Signal, 1)
		var pos int
		for _, x := range cent {
			if math.Abs(math.Abs(float64(x))-c.want) > 1e-6 {
				t.Fatalf("SignalDim %d, width %d: entry %g, want ±%g", c.p.SignalDim, c.p.FeatDim, x, c.want)
			}
			if x > 0 {
				pos++
			}
		}
		if f := float64(pos) / float64(len(cent)); math.Abs(f-0.5) > 0.03 {
			t.Errorf("SignalDim %d: %.3f of the entries positive", c.p.SignalDim, f)
		}
	}
}

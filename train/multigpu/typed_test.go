package multigpu

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// igbhTiny is igbh-sim at 1/2000 of IGB-H medium (every type with
// features: no learned rows) with a small two-layer R-SAGE.
func igbhTiny(t *testing.T) (*dataset.Dataset, train.Config) {
	t.Helper()
	p, err := rmat.LookupVariant("igbh-sim", rmat.Variant{Scale: 0.0005})
	if err != nil {
		t.Fatal(err)
	}
	ds := traintest.Generate(t, p)
	c := train.Defaults()
	c.Model, c.Layers, c.Hidden, c.Fanouts, c.Batch = "rsage", 2, 32, []int{5, 3}, 256
	c.Dropout, c.LR, c.Epochs = 0, 0.003, 2
	return ds, c
}

// TestTypedDevicesMatchOneDevice: a typed graph whose types all have
// features trains on 2 and 4 CPU devices to the losses of one device with
// the same global batch, every rank holding the same parameters after
// every step (dropout 0: a typed model's dropout masks are keyed by row,
// which a rank numbers otherwise).
func TestTypedDevicesMatchOneDevice(t *testing.T) {
	ds, cfg := igbhTiny(t)
	devicesMatchOneDevice(t, ds, cfg, 1e-5)
}

// TestTypedDevicesRefuseLearnedRows: a typed graph with a type without
// features (learned rows) is refused on several devices, naming the type.
func TestTypedDevicesRefuseLearnedRows(t *testing.T) {
	p, err := rmat.Lookup("hetero-tiny")
	if err != nil {
		t.Fatal(err)
	}
	ds := traintest.Generate(t, p)
	cfg := train.Defaults()
	cfg.Model, cfg.Layers, cfg.Hidden, cfg.Fanouts, cfg.Batch, cfg.Epochs = "rsage", 2, 16, []int{5, 3}, 256, 1
	bes, comms := traintest.CPUGroup(t, 2, false)
	_, err = train.New(bes[0], ds, cfg, train.Options{Parallel: comms[0]})
	if err == nil || !strings.Contains(err.Error(), "author") {
		t.Fatalf("hetero-tiny on two devices: %v, want a refusal naming author", err)
	}
}

// TestTypedReplayDevicesMatchEager: the typed step replayed on 2 devices
// (its envelope tightened over the group's largest sizes) gives bitwise
// the eager 2-device run, every rank holding the same parameters.
func TestTypedReplayDevicesMatchEager(t *testing.T) {
	ds, cfg := igbhTiny(t)
	replayMatchesEagerOn2(t, ds, cfg)
}

package hybrid

import (
	"context"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/train"
)

func TestLeakProbe(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Batch = 32
	be := record.New(cpu.New(2))
	opt := Options{CacheRows: 3000, Hot: HotOptions{Staleness: 1, SuperBatch: 2, NewCPU: func() (backend.Backend, error) { return cpu.New(2), nil }}}
	m := backend.MemoryOf(be)
	t.Logf("before %d", m.InUseBytes())
	for _, c := range []float64{0, 0.05} {
		o := opt
		o.Hot.Ratio, o.trial = c, &trial{}
		_, _, err := Run(context.Background(), be, ds, cfg, train.Options{Replay: true}, o)
		t.Logf("ratio %g: err %v, in use %d", c, err, m.InUseBytes())
	}
	o := opt
	_, _, err := Run(context.Background(), be, ds, cfg, train.Options{Replay: true}, o)
	t.Logf("full run: err %v, in use %d", err, m.InUseBytes())
}

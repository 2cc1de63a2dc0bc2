package job

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
)

// TestStepTimesFlag: --step-times reads seeds:ms pairs in ascending seeds.
func TestStepTimesFlag(t *testing.T) {
	got, err := parseStepTimes("512:0.8, 1024:1.0")
	if err != nil || got.At(768) != 0.9 {
		t.Errorf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"512", "1024:1.0,512:0.8", "a:1", "512:0"} {
		if _, err := parseStepTimes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestTypedParamBytes: the gradients a typed simulation all-reduces are
// the ones a trainer's typed model all-reduces (its gradient arena), which
// hold every trained parameter as float32 (each padded to 256 bytes), for R-SAGE, R-GCN with bases and R-GAT on
// igbh-sim at 1/2000 of IGB-H medium.
func TestTypedParamBytes(t *testing.T) {
	p, err := rmat.LookupVariant("igbh-sim", rmat.Variant{Scale: 0.0005})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := rmat.Generate(p, rmat.Options{Seed: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	for _, model := range []string{"rsage", "rgcn", "rgat"} {
		cfg := PresetConfig(p)
		cfg.Model, cfg.Hidden, cfg.Heads, cfg.Layers, cfg.Fanouts = model, 24, 1, 2, []int{4, 3}
		if model == "rgat" {
			cfg.Heads = 2
		}
		if model == "rgcn" {
			cfg.Bases = 2
		}
		got, err := TypedParamBytes(ds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		be := cpu.New(1)
		tr, err := train.New(be, ds, cfg, train.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := tr.Model().Grads()
		reduced := int64(g.Len()) * int64(g.DType().Size())
		var params, n int64
		for _, p := range tr.Params() {
			if !p.Buffer {
				params += 4 * int64(p.Size())
				n++
			}
		}
		tr.Close()
		be.Close()
		// Each parameter's gradient starts on 256 bytes in the arena.
		if got != reduced || got < params || got >= params+256*n {
			t.Errorf("%s: simulated %d bytes of gradients; the trainer all-reduces %d, its %d parameters hold %d", model, got, reduced, n, params)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%s and %s have the same %d bytes", model, other, got)
		}
		seen[got] = model
	}
}

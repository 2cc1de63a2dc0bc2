package job

import (
	"testing"

	"github.com/fanout-gnn/fanout/train"
)

// TestGPUBottomProducts: bfloat16 bottom products are the GPU default for
// GraphSAGE and for GAT's aggregate-first bottom layer, with TF32, outside
// the hybrid mode; float32 for other models, GAT projecting first, odd
// hidden widths, one layer, normalisation, float32-grade products, the
// hybrid mode and the CPU.
func TestGPUBottomProducts(t *testing.T) {
	on := func() bool { return true }
	base := train.Config{Model: "sage", Layers: 3, Hidden: 256}
	for _, c := range []struct {
		name      string
		set       func(*train.Config)
		tf32, hyb bool
		onGPUs    func() bool
		wantBF16  bool
	}{
		{"sage", func(*train.Config) {}, true, false, on, true},
		{"gat", func(c *train.Config) { c.Model = "gat" }, true, false, on, true},
		{"gat projecting first", func(c *train.Config) { c.Model, c.GATProjectFirst = "gat", true }, true, false, on, false},
		{"gcn", func(c *train.Config) { c.Model = "gcn" }, true, false, on, false},
		{"gin", func(c *train.Config) { c.Model = "gin" }, true, false, on, false},
		{"odd hidden", func(c *train.Config) { c.Hidden = 255 }, true, false, on, false},
		{"one layer", func(c *train.Config) { c.Layers = 1 }, true, false, on, false},
		{"batch norm", func(c *train.Config) { c.Norm = "batch" }, true, false, on, false},
		{"float32 products", func(*train.Config) {}, false, false, on, false},
		{"hybrid", func(*train.Config) {}, true, true, on, false},
		{"cpu", func(*train.Config) {}, true, false, func() bool { return false }, false},
	} {
		cfg := base
		c.set(&cfg)
		got := GPUBottomProducts(cfg, c.tf32, c.hyb, c.onGPUs)
		if want := map[bool]string{true: "bfloat16"}[c.wantBF16]; got != want {
			t.Errorf("%s: %q, want %q", c.name, got, want)
		}
	}
}

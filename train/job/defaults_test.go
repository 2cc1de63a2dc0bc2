package job

import (
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// TestGPUBottomProducts: bfloat16 bottom products are the GPU default for
// GraphSAGE and for GAT's aggregate-first bottom layer, with TF32, outside
// the hybrid mode; float32 for other models, GAT projecting first, odd
// hidden widths, GAT without an aggregate-first bfloat16 form at the
// input width (as wide as hidden, or odd), one layer, normalisation,
// float32-grade products, the hybrid mode and the CPU.
func TestGPUBottomProducts(t *testing.T) {
	on := func() bool { return true }
	base := train.Config{Model: "sage", Layers: 3, Hidden: 256}
	for _, c := range []struct {
		name      string
		set       func(*train.Config)
		inDim     int
		tf32, hyb bool
		onGPUs    func() bool
		wantBF16  bool
	}{
		{"sage", func(*train.Config) {}, 100, true, false, on, true},
		{"gat", func(c *train.Config) { c.Model = "gat" }, 100, true, false, on, true},
		{"gat projecting first", func(c *train.Config) { c.Model, c.GATProjectFirst = "gat", true }, 100, true, false, on, false},
		{"gcn", func(c *train.Config) { c.Model = "gcn" }, 100, true, false, on, false},
		{"gin", func(c *train.Config) { c.Model = "gin" }, 100, true, false, on, false},
		{"odd hidden", func(c *train.Config) { c.Hidden = 255 }, 100, true, false, on, false},
		{"one layer", func(c *train.Config) { c.Layers = 1 }, 100, true, false, on, false},
		{"batch norm", func(c *train.Config) { c.Norm = "batch" }, 100, true, false, on, false},
		{"float32 products", func(*train.Config) {}, 100, false, false, on, false},
		{"hybrid", func(*train.Config) {}, 100, true, true, on, false},
		{"gat, input not yet known", func(c *train.Config) { c.Model = "gat" }, 0, true, false, on, true},
		{"gat, input as wide as hidden", func(c *train.Config) { c.Model = "gat" }, 256, true, false, on, false},
		{"gat, odd input", func(c *train.Config) { c.Model = "gat" }, 101, true, false, on, false},
		{"sage, input as wide as hidden", func(*train.Config) {}, 256, true, false, on, true},
		{"cpu", func(*train.Config) {}, 100, true, false, func() bool { return false }, false},
	} {
		cfg := base
		c.set(&cfg)
		got := GPUBottomProducts(cfg, c.inDim, c.tf32, c.hyb, c.onGPUs)
		if want := map[bool]string{true: "bfloat16"}[c.wantBF16]; got != want {
			t.Errorf("%s: %q, want %q", c.name, got, want)
		}
	}
}

// TestFitBottom: the GPU default of bfloat16 bottom products, chosen
// before the input width was known, stays where the bottom layer has a
// bfloat16 form at the dataset's width and is dropped where it has none
// (GAT with input as wide as hidden, a typed model); bfloat16 asked for is
// kept as asked (the model then multiplies in float32, as documented).
func TestFitBottom(t *testing.T) {
	for _, c := range []struct {
		name            string
		model           string
		featDim         int
		isDefault, want bool
	}{
		{"gat, narrow input", "gat", 100, true, true},
		{"gat, input as wide as hidden", "gat", 256, true, false},
		{"sage, wide input", "sage", 1024, true, true},
		{"rsage", "rsage", 100, true, false},
		{"gat, wide input, asked", "gat", 256, false, true},
	} {
		j := &Job{Config: train.Config{Model: c.model, Layers: 2, Hidden: 256, Heads: 4, BottomProducts: "bfloat16"}, BottomDefault: c.isDefault}
		j.fitBottom(&dataset.Dataset{FeatDim: c.featDim})
		if got := j.Config.BottomProducts == "bfloat16"; got != c.want || j.BottomDefault != (c.isDefault && c.want) {
			t.Errorf("%s: products %q, default %v; want bfloat16 %v", c.name, j.Config.BottomProducts, j.BottomDefault, c.want)
		}
	}
}

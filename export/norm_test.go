package export

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/nn"
)

// modelCheckpoint is a checkpoint of a freshly made model of cfg (its
// parameters as NewModel made them), after steps training steps.
func modelCheckpoint(t *testing.T, kind string, cfg nn.Config, steps int32) *Model {
	t.Helper()
	be := cpu.New(1)
	m, err := nn.NewModel(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	c := &Model{Config: cfg,
		Steps: steps}
	for _, p := range m.Params() {
		w := make([]float32, p.Size())
		be.Read(w, p.W, 0)
		c.Params = append(c.Params, Param{Name: p.Name, Shape: p.Shape, Data: w})
	}
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPyGNormJK: models with normalisation and jumping knowledge export
// under BasicGNN's names (norms.{l}, GIN's MLP norms, lin), every name
// once, with the running statistics split into running_mean and
// running_var, the steps as num_batches_tracked, the head's weight
// transposed, and the norm and jk arguments in the metadata.
func TestPyGNormJK(t *testing.T) {
	bn := func(p string) []string {
		return []string{p + "module.bias", p + "module.num_batches_tracked", p + "module.running_mean", p + "module.running_var", p + "module.weight"}
	}
	ln := func(p string) []string { return []string{p + "bias", p + "weight"} }
	cases := []struct {
		kind, norm, jk string
		extra          []string // besides the convolutions' own
		meta           map[string]string
	}{
		{"gcn", nn.NormBatch, "", bn("norms.0."), map[string]string{"norm": "batch_norm"}},
		{"sage", nn.NormLayer, nn.JKCat, slices.Concat(ln("norms.0."), ln("norms.1."), []string{"lin.bias", "lin.weight"}),
			map[string]string{"norm": "layer_norm", "norm_kwargs": `{"mode": "node"}`, "jk": "cat"}},
		{"gin", nn.NormBatch, nn.JKMax, slices.Concat(bn("norms.0."), bn("norms.1."), bn("convs.0.nn.norms.0."), bn("convs.1.nn.norms.0."), []string{"lin.bias", "lin.weight"}),
			map[string]string{"norm": "batch_norm", "jk": "max"}},
		{"gat", nn.NormBatch, nn.JKLast, slices.Concat(bn("norms.0."), bn("norms.1."), []string{"lin.bias", "lin.weight"}),
			map[string]string{"norm": "batch_norm", "jk": "last"}},
	}
	for _, tc := range cases {
		cfg := nn.Config{Kind: tc.kind, InDim: 3, Hidden: 4, Classes: 2, Layers: 2, Norm: tc.norm, JK: tc.jk}
		if tc.kind == "gat" {
			cfg.Heads, cfg.OutHeads = 2, 3
		}
		c := modelCheckpoint(t, tc.kind, cfg, 17)
		ts, meta, err := PyG(*c)
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		path := filepath.Join(t.TempDir(), "m.safetensors")
		if err := WriteSafetensors(path, ts, meta); err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		got, gotMeta, err := ReadSafetensors(path)
		if err != nil {
			t.Fatal(err)
		}
		var extra []string
		for n := range got {
			if !strings.HasPrefix(n, "convs.") || strings.Contains(n, ".nn.norms.") {
				extra = append(extra, n)
			}
		}
		slices.Sort(extra)
		want := slices.Sorted(slices.Values(tc.extra))
		if !slices.Equal(extra, want) {
			t.Errorf("%s: tensors besides the convolutions' %v, want %v", tc.kind, extra, want)
		}
		for k, v := range tc.meta {
			if gotMeta[k] != v {
				t.Errorf("%s: metadata %s = %q, want %q", tc.kind, k, gotMeta[k], v)
			}
		}
		if gotMeta["last_conv"] != "" {
			t.Errorf("%s: last_conv %q under jumping knowledge (every layer is hidden)", tc.kind, gotMeta["last_conv"])
		}
		if tc.norm == nn.NormBatch {
			if v := got["norms.0.module.running_var"]; len(v.Data) != 4 || v.Data[0] != 1 {
				t.Errorf("%s: running_var %+v, want 4 ones", tc.kind, v)
			}
			if v := got["norms.0.module.num_batches_tracked"]; len(v.Shape) != 0 || v.Data[0] != 17 {
				t.Errorf("%s: num_batches_tracked %+v, want the scalar 17", tc.kind, v)
			}
		}
		if tc.jk != "" {
			in := 4
			if tc.jk == nn.JKCat {
				in = 8
			}
			if w := got["lin.weight"]; !slices.Equal(w.Shape, []int{2, in}) {
				t.Errorf("%s: lin.weight shape %v, want [2 %d]", tc.kind, w.Shape, in)
			}
		}
	}
}

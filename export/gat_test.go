package export

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/nn"
)

// gatCheckpoint makes a GAT checkpoint whose every value says where it is:
// layer l's w[i][h·dim+f] = 1000l + 100i + 10h + f, att_src[h][f] =
// 1000l + 500 + 10h + f, att_dst the same + 100, bias[k] = 1000l + 700 + k.
func gatCheckpoint(m nn.Config) *Model {
	m.Kind = "gat"
	c := &Model{Config: m}
	for l := 0; l < m.Layers; l++ {
		in, heads, dim := gatLayerDims(m, l)
		base := float32(1000 * l)
		w := make([]float32, in*heads*dim)
		for i := 0; i < in; i++ {
			for h := 0; h < heads; h++ {
				for f := 0; f < dim; f++ {
					w[i*heads*dim+h*dim+f] = base + float32(100*i+10*h+f)
				}
			}
		}
		att := func(off float32) []float32 {
			a := make([]float32, heads*dim)
			for h := 0; h < heads; h++ {
				for f := 0; f < dim; f++ {
					a[h*dim+f] = base + off + float32(10*h+f)
				}
			}
			return a
		}
		out := heads * dim
		if l == m.Layers-1 {
			out = dim
		}
		b := make([]float32, out)
		for k := range b {
			b[k] = base + 700 + float32(k)
		}
		for _, p := range []struct {
			name  string
			shape []int
			data  []float32
		}{{"w", []int{in, heads * dim}, w}, {"att_src", []int{heads, dim}, att(500)}, {"att_dst", []int{heads, dim}, att(600)}, {"bias", []int{out}, b}} {
			c.Params = append(c.Params, Param{Name: fmt.Sprintf("layer%d.%s", l, p.name), Shape: p.shape, Data: p.data})
		}
	}
	return c
}

// TestPyGGAT: GATConv's names and shapes (lin.weight [heads·dim, in],
// att_src and att_dst [1, heads, dim], bias concatenated or averaged); row
// h·dim+f of lin.weight is head h's feature f, column i input i; the file
// reads back the same; the metadata names the model, its heads and, when
// the last layer's head count differs, the GATConv to put in its place.
func TestPyGGAT(t *testing.T) {
	m := nn.Config{InDim: 3, Hidden: 4, Classes: 2, Layers: 2, Heads: 2, OutHeads: 3}
	c := gatCheckpoint(m)
	ts, meta, err := PyG(*c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gat.safetensors")
	if err := WriteSafetensors(path, ts, meta); err != nil {
		t.Fatal(err)
	}
	got, gotMeta, err := ReadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ts) {
		t.Fatalf("read %d tensors, wrote %d", len(got), len(ts))
	}
	for _, w := range ts {
		if g := got[w.Name]; !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
			t.Fatalf("%s read back as %v %v, written %v %v", w.Name, g.Shape, g.Data, w.Shape, w.Data)
		}
	}
	wantShapes := map[string][]int{
		"convs.0.lin.weight": {4, 3}, "convs.0.att_src": {1, 2, 2}, "convs.0.att_dst": {1, 2, 2}, "convs.0.bias": {4},
		"convs.1.lin.weight": {6, 4}, "convs.1.att_src": {1, 3, 2}, "convs.1.att_dst": {1, 3, 2}, "convs.1.bias": {2},
	}
	for name, shape := range wantShapes {
		if g, ok := got[name]; !ok || !slices.Equal(g.Shape, shape) {
			t.Errorf("%s: shape %v (present %v), want %v", name, g.Shape, ok, shape)
		}
	}
	for l := 0; l < m.Layers; l++ {
		in, heads, dim := gatLayerDims(m, l)
		base := float32(1000 * l)
		lin := got[fmt.Sprintf("convs.%d.lin.weight", l)].Data
		src, dst := got[fmt.Sprintf("convs.%d.att_src", l)].Data, got[fmt.Sprintf("convs.%d.att_dst", l)].Data
		for h := 0; h < heads; h++ {
			for f := 0; f < dim; f++ {
				for i := 0; i < in; i++ {
					if v, want := lin[(h*dim+f)*in+i], base+float32(100*i+10*h+f); v != want {
						t.Fatalf("layer %d lin.weight[%d, %d] (head %d feature %d, input %d) = %v, want %v", l, h*dim+f, i, h, f, i, v, want)
					}
				}
				// [1, heads, dim] row-major: element (0, h, f) at h·dim+f.
				if src[h*dim+f] != base+500+float32(10*h+f) || dst[h*dim+f] != base+600+float32(10*h+f) {
					t.Fatalf("layer %d att (0, %d, %d): src %v, dst %v", l, h, f, src[h*dim+f], dst[h*dim+f])
				}
			}
		}
		b := got[fmt.Sprintf("convs.%d.bias", l)].Data
		for k, v := range b {
			if v != base+700+float32(k) {
				t.Fatalf("layer %d bias[%d] = %v", l, k, v)
			}
		}
	}
	want := map[string]string{
		"format": "pt", "pyg_model": "torch_geometric.nn.models.GAT", "in_channels": "3", "hidden_channels": "4",
		"out_channels": "2", "num_layers": "2", "heads": "2", "out_heads": "3",
		"last_conv": "torch_geometric.nn.conv.GATConv(4, 2, heads=3, concat=False)",
	}
	if !mapsEqual(gotMeta, want) {
		t.Errorf("metadata %v, want %v", gotMeta, want)
	}

	// As many output heads as hidden ones: the model as PyG builds it.
	m.OutHeads = 2
	if _, meta, err := PyG(*gatCheckpoint(m)); err != nil || meta["out_heads"] != "2" || meta["last_conv"] != "" {
		t.Errorf("out_heads = heads: metadata %v, err %v", meta, err)
	}
	// One layer: its input is the features, its heads the output heads.
	one := nn.Config{InDim: 3, Hidden: 4, Classes: 2, Layers: 1, Heads: 1, OutHeads: 2}
	ts, meta, err = PyG(*gatCheckpoint(one))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 || !slices.Equal(ts[0].Shape, []int{4, 3}) || meta["last_conv"] != "torch_geometric.nn.conv.GATConv(3, 2, heads=2, concat=False)" {
		t.Errorf("one layer: %d tensors, lin.weight %v, metadata %v", len(ts), ts[0].Shape, meta)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestPyGGATRefuses: a shape that is not the configuration's, a missing or
// repeated parameter, or a layer beyond the model's is an error naming it.
func TestPyGGATRefuses(t *testing.T) {
	m := nn.Config{InDim: 3, Hidden: 4, Classes: 2, Layers: 2, Heads: 2, OutHeads: 3}
	for _, tc := range []struct {
		name   string
		change func(c *Model)
		want   string
	}{
		{"att shape", func(c *Model) { c.Params[1].Shape = []int{1, 4} }, `"layer0.att_src" has shape [1 4], want [2 2]`},
		{"concatenated last bias", func(c *Model) {
			c.Params[7].Shape, c.Params[7].Data = []int{6}, make([]float32, 6)
		}, `"layer1.bias" has shape [6], want [2]`},
		{"w not a matrix", func(c *Model) { c.Params[4].Shape = []int{24} }, `"layer1.w" has shape [24], want [4 6]`},
		{"heads of another config", func(c *Model) { c.Config.OutHeads = 2 }, `"layer1.w" has shape [4 6], want [4 4]`},
		{"missing", func(c *Model) { c.Params = c.Params[:6] }, `"layer1.att_dst" appears 0 times`},
		{"repeated", func(c *Model) {
			c.Params = append(c.Params, c.Params[3])
		}, `"layer0.bias" appears 2 times`},
		{"beyond the layers", func(c *Model) { c.Params[4].Name = "layer2.w" }, `"layer2.w": the model has 2 layers`},
		{"unknown", func(c *Model) { c.Params[0].Name = "layer0.w_self" }, `"layer0.w_self" has no PyG name`},
	} {
		c := gatCheckpoint(m)
		tc.change(c)
		if _, _, err := PyG(*c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one containing %s", tc.name, err, tc.want)
		}
	}
}

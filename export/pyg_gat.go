package export

import (
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/nn"
)

// GAT maps to torch_geometric.nn.models.GAT(in_channels, hidden_channels,
// num_layers, out_channels, heads=Heads): its hidden convolutions are
// GATConv(in, hidden/heads, heads, concat=True) and, out_channels being
// given, its last GATConv(in, out_channels, heads, concat=False), whose
// heads are averaged, as fanout's last layer's are. Both use PyG's defaults
// negative_slope=0.2 and add_self_loops=True, fanout's slope and self loop.
// The model holds one head count for all layers, so where OutHeads differs
// from Heads (one output head on Cora) the metadata's last_conv names the
// GATConv that replaces convs[num_layers-1] before loading.

// gatLayerDims returns layer l's input width, head count and width per head.
func gatLayerDims(m nn.Config, l int) (in, heads, dim int) {
	in = m.Hidden
	if l == 0 {
		in = m.InDim
	}
	if l == m.Layers-1 && !topIsHidden(m) {
		return in, m.OutHeads, m.Classes
	}
	if m.Heads < 1 {
		return in, m.Heads, 0
	}
	return in, m.Heads, m.Hidden / m.Heads
}

// gatCheck checks the shape of layer l's parameter suffix against the
// model's configuration: w [in, heads·dim], att_src and att_dst [heads,
// dim], bias [heads·dim] in a hidden layer and [classes] in the last.
func gatCheck(m nn.Config, l int, suffix string, shape []int) error {
	name := fmt.Sprintf("layer%d.%s", l, suffix)
	if l < 0 || l >= m.Layers {
		return fmt.Errorf("export: gat parameter %q: the model has %d layers", name, m.Layers)
	}
	in, heads, dim := gatLayerDims(m, l)
	top := l == m.Layers-1 && !topIsHidden(m)
	if heads < 1 || dim < 1 || (!top && m.Hidden%m.Heads != 0) {
		return fmt.Errorf("export: gat layer %d: %d heads of hidden %d, classes %d: not a GAT configuration", l, heads, m.Hidden, m.Classes)
	}
	var want []int
	switch suffix {
	case "w":
		want = []int{in, heads * dim}
	case "att_src", "att_dst":
		want = []int{heads, dim}
	case "bias":
		want = []int{heads * dim}
		if top {
			want = []int{dim} // heads averaged
		}
	default:
		return fmt.Errorf("export: gat parameter %q has no PyG name", name)
	}
	if !slices.Equal(shape, want) {
		return fmt.Errorf("export: gat parameter %q has shape %v, want %v (layer %d: input %d, %d heads of %d)", name, shape, want, l, in, heads, dim)
	}
	return nil
}

// gatComplete checks that the model holds every layer's w, att_src,
// att_dst and bias once, so that a strict load cannot miss one.
func gatComplete(c Model) error {
	seen := map[string]int{}
	for _, p := range c.Params {
		seen[p.Name]++
	}
	for l := 0; l < c.Config.Layers; l++ {
		for _, s := range []string{"w", "att_src", "att_dst", "bias"} {
			name := fmt.Sprintf("layer%d.%s", l, s)
			if seen[name] != 1 {
				return fmt.Errorf("export: gat parameter %q appears %d times in the model, want once", name, seen[name])
			}
		}
	}
	return nil
}

// gatMeta adds the GAT model's arguments to meta: heads, out_heads, and
// where they differ the last convolution to put in place of the model's.
func gatMeta(m nn.Config, meta map[string]string) {
	meta["heads"] = fmt.Sprint(m.Heads)
	meta["out_heads"] = fmt.Sprint(m.OutHeads)
	if m.OutHeads != m.Heads && !topIsHidden(m) {
		in, heads, dim := gatLayerDims(m, m.Layers-1)
		meta["last_conv"] = fmt.Sprintf("torch_geometric.nn.conv.GATConv(%d, %d, heads=%d, concat=False)", in, dim, heads)
	}
}

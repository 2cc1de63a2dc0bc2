package export

import (
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/nn"
)

// rgatConfig is an rgat over papers (3 features) and authors (learned rows
// of 2): papers cite papers, authors write papers and are written by them;
// two heads of two columns in the hidden layer, two averaged at the top.
func rgatConfig() nn.Config {
	return nn.Config{Kind: nn.KindRGAT, InDim: 3, Hidden: 4, Classes: 2, Layers: 2, Heads: 2, OutHeads: 2,
		Types:     []nn.TypeSpec{{Name: "paper", InDim: 3}, {Name: "author", InDim: 2}},
		Relations: []nn.RelSpec{{Name: "paper__cites__paper", Src: 0, Dst: 0}, {Name: "author__writes__paper", Src: 1, Dst: 0}, {Name: "paper__rev_writes__author", Src: 0, Dst: 1}}}
}

// TestPyGRGAT: rgat's export names every parameter as GATConv under
// to_hetero's keys: lin where a relation's two types have rows of one
// width (every relation above the bottom, cites at it), lin_src and
// lin_dst where not (writes and its reverse at the bottom), each the
// weight transposed; att_src and att_dst [1, heads, dim]; the bias of
// concatenated heads below the top and of averaged ones at it; nothing
// left out or added; the metadata gives the heads. With jumping
// knowledge the top layer concatenates its heads too and the head is
// to_hetero's lin. A parameter of the wrong shape is an error naming it.
func TestPyGRGAT(t *testing.T) {
	m := modelOf(t, rgatConfig())
	ts, meta, err := PyG(m)
	if err != nil {
		t.Fatal(err)
	}
	got := byName(ts)
	// Per layer and relation the projections as GATConv names them, and
	// the bias's width; every conv has att_src and att_dst [1, 2, 2] too.
	convs := []struct {
		key  string
		lins map[string][]int
		bias int
	}{
		{"0.paper__cites__paper", map[string][]int{"lin.weight": {4, 3}}, 4},
		{"0.author__writes__paper", map[string][]int{"lin_src.weight": {4, 2}, "lin_dst.weight": {4, 3}}, 4},
		{"0.paper__rev_writes__author", map[string][]int{"lin_src.weight": {4, 3}, "lin_dst.weight": {4, 2}}, 4},
		{"1.paper__cites__paper", map[string][]int{"lin.weight": {4, 4}}, 2},
		{"1.author__writes__paper", map[string][]int{"lin.weight": {4, 4}}, 2},
		{"1.paper__rev_writes__author", map[string][]int{"lin.weight": {4, 4}}, 2},
	}
	want := map[string][]int{}
	for _, c := range convs {
		pre := "gnn.convs." + c.key + "."
		for name, shape := range c.lins {
			want[pre+name] = shape
		}
		want[pre+"att_src"], want[pre+"att_dst"], want[pre+"bias"] = []int{1, 2, 2}, []int{1, 2, 2}, []int{c.bias}
	}
	for name, shape := range want {
		if g, ok := got[name]; !ok || !slices.Equal(g.Shape, shape) {
			t.Errorf("%s: shape %v (present %t), want %v", name, g.Shape, ok, shape)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d tensors, want %d", len(got), len(want))
	}
	params := map[string]Param{}
	for _, p := range m.Params {
		params[p.Name] = p
	}
	// lin_src.weight [out, in] is w_src [in, out] transposed; att_src is
	// [heads, dim] as it was.
	w, lin := params["layer0.author__writes__paper.w_src"], got["gnn.convs.0.author__writes__paper.lin_src.weight"]
	for i := range 2 {
		for j := range 4 {
			if lin.Data[j*2+i] != w.Data[i*4+j] {
				t.Fatalf("lin_src.weight[%d][%d] = %g, w_src[%d][%d] = %g", j, i, lin.Data[j*2+i], i, j, w.Data[i*4+j])
			}
		}
	}
	if a := params["layer1.paper__cites__paper.att_dst"]; !slices.Equal(got["gnn.convs.1.paper__cites__paper.att_dst"].Data, a.Data) {
		t.Error("att_dst's values moved")
	}
	if meta["model"] != "rgat" || meta["heads"] != "2" || meta["out_heads"] != "2" || !strings.Contains(meta["pyg_model"], "GATConv") {
		t.Errorf("metadata %v", meta)
	}

	jk := rgatConfig()
	jk.JK = nn.JKLast
	ts, _, err = PyG(modelOf(t, jk))
	if err != nil {
		t.Fatal(err)
	}
	got = byName(ts)
	for name, shape := range map[string][]int{"gnn.convs.1.author__writes__paper.bias": {4}, "gnn.lin.paper.weight": {2, 4}} {
		if g := got[name]; !slices.Equal(g.Shape, shape) {
			t.Errorf("jk last: %s shape %v, want %v", name, g.Shape, shape)
		}
	}

	bad := modelOf(t, rgatConfig())
	for i, p := range bad.Params {
		if p.Name == "layer0.author__writes__paper.att_src" {
			bad.Params[i].Shape = []int{4}
		}
	}
	if _, _, err := PyG(bad); err == nil || !strings.Contains(err.Error(), "layer0.author__writes__paper.att_src") {
		t.Errorf("att_src of shape [4]: %v", err)
	}
}

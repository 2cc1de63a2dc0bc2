package export

import (
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/nn"
)

// rgat maps to PyTorch Geometric's GATConv per layer and relation, keyed
// as to_hetero keys its copies (gnn.convs.L.src__rel__dst), under a module
// that sums the relations into each type as HeteroConv(aggr="sum") does
// (scripts/pyg_roundtrip.py builds it): GATConv(in, dim, heads,
// concat, add_self_loops=False) where the relation's source and
// destination rows have one width (its lin), GATConv((in_src, in_dst),
// ...) where they differ (lin_src and lin_dst); concat in hidden layers,
// heads averaged at a top without jumping knowledge's head. Its
// attention vectors gain a leading 1 ([1, heads, dim]).

// rgatHeads are layer l's heads and width per head.
func rgatHeads(m nn.Config, l int) (heads, dim int) {
	if l == m.Layers-1 && !topIsHidden(m) {
		return m.OutHeads, m.Classes
	}
	if m.Heads < 1 {
		return m.Heads, 0
	}
	return m.Heads, m.Hidden / m.Heads
}

// rgatConv moves relation rel's parameters at layer l (fanout's
// layerL.REL.*, in byName) to GATConv's names under conv
// ("gnn.convs.L.REL."), checking their shapes: w [in, heads·dim] (or w_src
// and w_dst) transposed to lin.weight (lin_src.weight, lin_dst.weight),
// att_src and att_dst [heads, dim] to [1, heads, dim], bias [heads·dim],
// or [dim] with heads averaged.
func rgatConv(byName map[string]Param, m nn.Config, l int, rel nn.RelSpec, conv string) ([]Tensor, error) {
	heads, dim := rgatHeads(m, l)
	if heads < 1 || dim < 1 {
		return nil, fmt.Errorf("export: rgat layer %d: %d heads of hidden %d, classes %d: not an attention configuration", l, heads, m.Hidden, m.Classes)
	}
	width := func(t int) int {
		if l == 0 {
			return m.Types[t].InDim
		}
		return m.Hidden
	}
	inS, inT := width(rel.Src), width(rel.Dst)
	out := heads * dim
	bias := out
	if l == m.Layers-1 && !topIsHidden(m) {
		bias = dim
	}
	type move struct {
		from, to string
		shape    []int // fanout's
	}
	moves := []move{{"w", "lin.weight", []int{inS, out}}}
	if inS != inT {
		moves = []move{{"w_src", "lin_src.weight", []int{inS, out}}, {"w_dst", "lin_dst.weight", []int{inT, out}}}
	}
	moves = append(moves, move{"att_src", "att_src", []int{heads, dim}}, move{"att_dst", "att_dst", []int{heads, dim}},
		move{"bias", "bias", []int{bias}})
	var ts []Tensor
	for _, mv := range moves {
		name := fmt.Sprintf("layer%d.%s.%s", l, rel.Name, mv.from)
		p, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("export: rgat model has no parameter %s", name)
		}
		if !slices.Equal(p.Shape, mv.shape) {
			return nil, fmt.Errorf("export: rgat parameter %q has shape %v, want %v (layer %d: inputs %d and %d wide, %d heads of %d)",
				name, p.Shape, mv.shape, l, inS, inT, heads, dim)
		}
		delete(byName, name)
		t := Tensor{Name: conv + mv.to, Shape: p.Shape, Data: p.Data}
		switch mv.from {
		case "w", "w_src", "w_dst":
			t.Shape, t.Data = []int{p.Shape[1], p.Shape[0]}, transpose(p.Data, p.Shape[0], p.Shape[1])
		case "att_src", "att_dst":
			t.Shape = []int{1, heads, dim}
		}
		ts = append(ts, t)
	}
	return ts, nil
}

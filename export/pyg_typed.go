package export

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/nn"
)

// pygTyped maps a typed model (rsage, rgcn, rgat) to a PyTorch Geometric
// module M whose load_state_dict(strict=True) takes the result: M.embed, a
// ModuleDict of torch.nn.Embedding for the featureless types
// ("embed.TYPE.weight"), and M.gnn, to_hetero(..., aggr="sum") of
//   - rsage: torch_geometric.nn.models.GraphSAGE: per layer and relation
//     (edge type key src__rel__dst) SAGEConv's lin_l (the neighbour mean,
//     with the bias) and lin_r (the destination's own row);
//   - rgcn: a module of per-layer convs (SAGEConv without root weight or
//     bias: the relation's weight on the neighbour mean) and lins (Linear:
//     each type's root weight and bias), x = convs[l](x) + lins[l](x). With
//     bases, each relation's weight is made from them here;
//
// or for rgat the same keys of a module of per-layer GATConv per relation,
// summed as HeteroConv(aggr="sum") sums them (pyg_rgat.go).
//
// Weights are transposed to torch.nn.Linear's [out, in]. The metadata
// names the model, its widths and the schema (JSON in node_types,
// edge_types, in_channels and embed).
func pygTyped(c Model) ([]Tensor, map[string]string, error) {
	m := c.Config
	var out []Tensor
	embed := map[string][2]int{}
	byName := map[string]Param{}
	for _, p := range c.Params {
		if ts, ok, err := typedNorm(c, p); ok || err != nil {
			if err != nil {
				return nil, nil, err
			}
			out = append(out, ts...)
			continue
		}
		if head, ok := strings.CutPrefix(p.Name, "jk."); ok {
			ts, err := typedHead(m, head, p)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, ts...)
			continue
		}
		if t, ok := strings.CutPrefix(p.Name, "embed."); ok {
			if len(p.Shape) != 2 {
				return nil, nil, fmt.Errorf("export: table %q of shape %v is not a matrix", p.Name, p.Shape)
			}
			out = append(out, Tensor{Name: "embed." + t + ".weight", Shape: p.Shape, Data: p.Data})
			embed[t] = [2]int{p.Shape[0], p.Shape[1]}
			continue
		}
		byName[p.Name] = p
	}
	linear := func(name, src string) error {
		p, ok := byName[src]
		if !ok {
			return fmt.Errorf("export: %s model has no parameter %s", m.Kind, src)
		}
		delete(byName, src)
		t := Tensor{Name: name, Shape: p.Shape, Data: p.Data}
		if len(p.Shape) == 2 {
			t.Shape, t.Data = []int{p.Shape[1], p.Shape[0]}, transpose(p.Data, p.Shape[0], p.Shape[1])
		}
		out = append(out, t)
		return nil
	}
	for l := range m.Layers {
		for r, rel := range m.Relations {
			conv := fmt.Sprintf("gnn.convs.%d.%s.", l, rel.Name)
			pre := fmt.Sprintf("layer%d.%s.", l, rel.Name)
			var err error
			switch {
			case m.Kind == nn.KindRGAT:
				var ts []Tensor
				if ts, err = rgatConv(byName, m, l, rel, conv); err == nil {
					out = append(out, ts...)
				}
			case m.Kind == nn.KindRSAGE:
				if err = linear(conv+"lin_l.weight", pre+"w_neigh"); err == nil {
					if err = linear(conv+"lin_l.bias", pre+"bias"); err == nil {
						err = linear(conv+"lin_r.weight", pre+"w_self")
					}
				}
			case m.Bases > 0:
				var w Tensor
				if w, err = basisWeight(byName, m, l, r); err == nil {
					w.Name = conv + "lin_l.weight"
					out = append(out, w)
				}
			default:
				err = linear(conv+"lin_l.weight", pre+"w")
			}
			if err != nil {
				return nil, nil, err
			}
		}
		if m.Kind != nn.KindRGCN {
			continue
		}
		for _, ty := range m.Types {
			lin := fmt.Sprintf("gnn.lins.%d.%s.", l, ty.Name)
			pre := fmt.Sprintf("layer%d.%s.", l, ty.Name)
			if err := linear(lin+"weight", pre+"root"); err != nil {
				return nil, nil, err
			}
			if err := linear(lin+"bias", pre+"bias"); err != nil {
				return nil, nil, err
			}
		}
		delete(byName, fmt.Sprintf("layer%d.bases", l))
		delete(byName, fmt.Sprintf("layer%d.comp", l))
	}
	for name := range byName {
		return nil, nil, fmt.Errorf("export: %s parameter %q has no PyG name", m.Kind, name)
	}
	meta, err := typedMeta(m, embed)
	if err == nil {
		normJKMeta(m, meta)
	}
	return out, meta, err
}

// typedHead maps jumping knowledge's head (jk.w [in, classes], jk.bias)
// to to_hetero's copies of BasicGNN's lin: the target type's holds the
// head; every other type's is zeros of the same shape (to_hetero gives
// each node type a lin; only the target's outputs are the model's).
func typedHead(m nn.Config, name string, p Param) ([]Tensor, error) {
	t := Tensor{Shape: p.Shape, Data: p.Data}
	switch {
	case name == "w" && len(p.Shape) == 2:
		t.Shape, t.Data = []int{p.Shape[1], p.Shape[0]}, transpose(p.Data, p.Shape[0], p.Shape[1])
		name = "weight"
	case name == "bias":
	default:
		return nil, fmt.Errorf("export: parameter %q of shape %v has no PyG name", p.Name, p.Shape)
	}
	var out []Tensor
	for i, ty := range m.Types {
		x := Tensor{Name: "gnn.lin." + ty.Name + "." + name, Shape: t.Shape, Data: t.Data}
		if i != m.Target {
			x.Data = make([]float32, len(t.Data))
		}
		out = append(out, x)
	}
	return out, nil
}

// typedNorm maps a type's normalisation parameter (layerL.TYPE.norm.X) to
// to_hetero's copy of BasicGNN's norms.L for the type, as pygNormJK maps a
// one-type model's; ok is false for any other parameter.
func typedNorm(c Model, p Param) (ts []Tensor, ok bool, err error) {
	var l int
	if _, err := fmt.Sscanf(p.Name, "layer%d.", &l); err != nil {
		return nil, false, nil
	}
	rest := p.Name[strings.IndexByte(p.Name, '.')+1:]
	ty, field, found := strings.Cut(rest, ".norm.")
	if !found {
		return nil, false, nil
	}
	one := c
	one.Params = []Param{{Name: fmt.Sprintf("layer%d.norm.%s", l, field), Shape: p.Shape, Data: p.Data}}
	ts, _, err = pygNormJK(one, 0)
	for i := range ts {
		// norms.L.X becomes gnn.norms.L.TYPE.X.
		pre := fmt.Sprintf("norms.%d.", l)
		ts[i].Name = "gnn." + pre + ty + "." + strings.TrimPrefix(ts[i].Name, pre)
	}
	return ts, true, err
}

// basisWeight is relation r's weight at layer l of an RGCN with bases,
// Σ_b comp[r, b]·V_b, as torch.nn.Linear's [out, in].
func basisWeight(byName map[string]Param, m nn.Config, l, r int) (Tensor, error) {
	bases, ok1 := byName[fmt.Sprintf("layer%d.bases", l)]
	comp, ok2 := byName[fmt.Sprintf("layer%d.comp", l)]
	if !ok1 || !ok2 {
		return Tensor{}, fmt.Errorf("export: rgcn with %d bases has no layer%d.bases or layer%d.comp", m.Bases, l, l)
	}
	B, R := m.Bases, len(m.Relations)
	if len(bases.Shape) != 2 || bases.Shape[0] != B || len(comp.Shape) != 2 || comp.Shape[0] != R || comp.Shape[1] != B {
		return Tensor{}, fmt.Errorf("export: layer%d bases %v and coefficients %v, want [%d, in·out] and [%d, %d]", l, bases.Shape, comp.Shape, B, R, B)
	}
	in, outDim := m.Hidden, m.Hidden
	if l == 0 {
		in = m.Types[0].InDim
	}
	if l == m.Layers-1 {
		outDim = m.Classes
	}
	if bases.Shape[1] != in*outDim {
		return Tensor{}, fmt.Errorf("export: layer%d bases of %d values each, want %d x %d", l, bases.Shape[1], in, outDim)
	}
	w := make([]float32, in*outDim)
	for b := range B {
		k := comp.Data[r*B+b]
		for i, v := range bases.Data[b*in*outDim : (b+1)*in*outDim] {
			w[i] += k * v
		}
	}
	return Tensor{Shape: []int{outDim, in}, Data: transpose(w, in, outDim)}, nil
}

// typedMeta describes a typed model for the loader: its kind and widths,
// and the schema as JSON.
func typedMeta(m nn.Config, embed map[string][2]int) (map[string]string, error) {
	var types []string
	in := map[string]int{}
	for _, t := range m.Types {
		types = append(types, t.Name)
		in[t.Name] = t.InDim
	}
	var edges [][3]string
	for _, r := range m.Relations {
		edges = append(edges, [3]string{m.Types[r.Src].Name, relName(r.Name), m.Types[r.Dst].Name})
	}
	meta := map[string]string{
		"format": "pt", "model": m.Kind,
		"num_layers": fmt.Sprint(m.Layers), "hidden_channels": fmt.Sprint(m.Hidden), "out_channels": fmt.Sprint(m.Classes),
		"target": m.Types[m.Target].Name,
	}
	meta["pyg_model"] = map[string]string{
		nn.KindRSAGE: "embed: ModuleDict of Embedding; gnn: to_hetero(torch_geometric.nn.models.GraphSAGE, aggr='sum')",
		nn.KindRGCN:  "embed: ModuleDict of Embedding; gnn: to_hetero(convs: SAGEConv(root_weight=False, bias=False), lins: Linear; x = convs[l](x) + lins[l](x), aggr='sum')",
		nn.KindRGAT: "embed: ModuleDict of Embedding; gnn: convs[l][src__rel__dst] = GATConv(add_self_loops=False) (lin, or lin_src and lin_dst where the types' widths differ), " +
			"summed into each type as HeteroConv(aggr='sum'); ReLU between layers",
	}[m.Kind]
	if m.Kind == nn.KindRGAT {
		meta["heads"], meta["out_heads"] = fmt.Sprint(m.Heads), fmt.Sprint(m.OutHeads)
	}
	for key, v := range map[string]any{"node_types": types, "edge_types": edges, "in_channels": in, "embed": embed} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		meta[key] = string(b)
	}
	return meta, nil
}

// relName is a relation's own name from its model name src__rel__dst.
func relName(s string) string {
	parts := strings.Split(s, "__")
	if len(parts) == 3 {
		return parts[1]
	}
	return s
}

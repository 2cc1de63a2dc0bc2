package export

import (
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/nn"
)

// Normalisation and jumping knowledge map to BasicGNN's norm and jk
// arguments: norm="batch_norm" makes norms.{l} a
// torch_geometric.nn.norm.BatchNorm (its torch BatchNorm1d is .module:
// weight, bias, running_mean, running_var, num_batches_tracked),
// norm="layer_norm" with norm_kwargs={"mode": "node"} a per-vertex
// LayerNorm (weight, bias; its default mode "graph" normalises over the
// whole graph, which fanout's does not). GIN passes its norm to each
// convolution's MLP too (convs.{l}.nn.norms.0). Jumping knowledge's head
// is BasicGNN's lin. eps (1e-5) and momentum (0.1) are the defaults of
// both.

// pygNormJK maps the model's parameter i when it is a normalisation's
// or jumping knowledge's, and reports whether it was.
func pygNormJK(c Model, i int) ([]Tensor, bool, error) {
	p := c.Params[i]
	w := p.Data
	if head, ok := strings.CutPrefix(p.Name, "jk."); ok {
		switch {
		case head == "w" && len(p.Shape) == 2:
			return []Tensor{{Name: "lin.weight", Shape: []int{p.Shape[1], p.Shape[0]}, Data: transpose(w, p.Shape[0], p.Shape[1])}}, true, nil
		case head == "bias":
			return []Tensor{{Name: "lin.bias", Shape: p.Shape, Data: w}}, true, nil
		}
		return nil, true, fmt.Errorf("export: parameter %q of shape %v has no PyG name", p.Name, p.Shape)
	}
	var l int
	if _, err := fmt.Sscanf(p.Name, "layer%d.", &l); err != nil {
		return nil, false, nil
	}
	rest := p.Name[strings.IndexByte(p.Name, '.')+1:]
	prefix := fmt.Sprintf("norms.%d.", l)
	if r, ok := strings.CutPrefix(rest, "mlp_norm."); ok {
		prefix, rest = fmt.Sprintf("convs.%d.nn.norms.0.", l), r
	} else if r, ok := strings.CutPrefix(rest, "norm."); ok {
		rest = r
	} else {
		return nil, false, nil
	}
	batch := c.Config.Norm == nn.NormBatch
	if batch {
		prefix += "module."
	}
	switch {
	case rest == "weight" || rest == "bias":
		return []Tensor{{Name: prefix + rest, Shape: p.Shape, Data: w}}, true, nil
	case rest == "running" && batch && len(p.Shape) == 2 && p.Shape[0] == 2:
		dim := p.Shape[1]
		return []Tensor{
			{Name: prefix + "running_mean", Shape: []int{dim}, Data: w[:dim]},
			{Name: prefix + "running_var", Shape: []int{dim}, Data: w[dim:]},
			// An int64 in torch; load_state_dict copies the value across
			// types. The steps taken, as torch counts them.
			{Name: prefix + "num_batches_tracked", Shape: []int{}, Data: []float32{float32(c.Steps)}},
		}, true, nil
	}
	return nil, true, fmt.Errorf("export: %s normalisation parameter %q of shape %v has no PyG name", c.Config.Norm, p.Name, p.Shape)
}

// normJKMeta adds BasicGNN's norm, norm_kwargs and jk arguments to meta.
func normJKMeta(m nn.Config, meta map[string]string) {
	switch m.Norm {
	case nn.NormBatch:
		meta["norm"] = "batch_norm"
	case nn.NormLayer:
		meta["norm"] = "layer_norm"
		meta["norm_kwargs"] = `{"mode": "node"}`
	}
	if m.JK != "" && m.JK != nn.JKNone {
		meta["jk"] = m.JK
	}
}

// topIsHidden reports whether the model's top layer is a hidden one
// (jumping knowledge: its head maps to the classes).
func topIsHidden(m nn.Config) bool { return m.JK != "" && m.JK != nn.JKNone }

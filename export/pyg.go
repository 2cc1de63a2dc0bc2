package export

import (
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/nn"
)

// Model is a trained model as the exports read it: its configuration, its
// parameters in the model's order (nn.Model.Params), and the optimiser
// steps it took (batch normalisation's num_batches_tracked).
type Model struct {
	Config nn.Config
	Params []Param
	Steps  int32
}

// Param is one parameter's name, shape and weights (row-major float32).
type Param struct {
	Name  string
	Shape []int
	Data  []float32
}

// pygName maps one of fanout's per-layer parameters to PyG's state_dict:
// layer l's parameter Suffix becomes convs.{l}.Name; weights are
// transposed (fanout keeps [in, out], torch.nn.Linear [out, in]).
type pygName struct {
	Suffix, Name string
	Transpose    bool
}

// pygNames are the mappings to torch_geometric.nn.models.GraphSAGE, GCN,
// GIN and GAT (BasicGNN: convs is the ModuleList of convolutions).
// SAGEConv's lin_l multiplies the neighbour mean and carries the bias,
// lin_r the root; GCNConv keeps its bias apart from lin.
var pygNames = map[string][]pygName{
	"sage": {{"w_neigh", "lin_l.weight", true}, {"bias", "lin_l.bias", false}, {"w_self", "lin_r.weight", true}},
	"gcn":  {{"w", "lin.weight", true}, {"bias", "bias", false}},
	// GINConv(nn=MLP([in, out, out])): the MLP's two Linear layers; the
	// model's bias is the second one's. eps is a parameter (train_eps) or
	// a buffer, in the state_dict either way.
	"gin": {{"w1", "nn.lins.0.weight", true}, {"b1", "nn.lins.0.bias", false},
		{"w2", "nn.lins.1.weight", true}, {"bias", "nn.lins.1.bias", false}, {"eps", "eps", false}},
	// GATConv (PyG 2.5 and later: one lin for sources and destinations);
	// att_src and att_dst gain a leading 1 (pyg_gat.go).
	"gat": {{"w", "lin.weight", true}, {"att_src", "att_src", false}, {"att_dst", "att_dst", false}, {"bias", "bias", false}},
}

// PyG returns the model's parameters under the names and layouts of
// PyTorch Geometric's model of the same kind, and metadata describing the
// model (its class and arguments).
func PyG(c Model) ([]Tensor, map[string]string, error) {
	if c.Config.Typed() {
		return pygTyped(c)
	}
	kind := c.Config.Kind
	names, ok := pygNames[kind]
	if !ok {
		return nil, nil, fmt.Errorf("export: no PyG mapping for model %q (mapped: sage, gcn, gin, gat)", kind)
	}
	var out []Tensor
	for i, p := range c.Params {
		if ts, ok, err := pygNormJK(c, i); err != nil {
			return nil, nil, err
		} else if ok {
			out = append(out, ts...)
			continue
		}
		var l int
		var suffix string
		if _, err := fmt.Sscanf(p.Name, "layer%d.", &l); err != nil {
			return nil, nil, fmt.Errorf("export: parameter %q is not named layerN.x", p.Name)
		}
		suffix = p.Name[strings.IndexByte(p.Name, '.')+1:]
		m, ok := find(names, suffix)
		if !ok {
			return nil, nil, fmt.Errorf("export: %s parameter %q has no PyG name", kind, p.Name)
		}
		t := Tensor{Name: fmt.Sprintf("convs.%d.%s", l, m.Name), Shape: p.Shape, Data: p.Data}
		if kind == "gat" {
			if err := gatCheck(c.Config, l, suffix, p.Shape); err != nil {
				return nil, nil, err
			}
			if suffix == "att_src" || suffix == "att_dst" {
				t.Shape = []int{1, p.Shape[0], p.Shape[1]} // [heads, dim] → [1, heads, dim]
			}
		}
		if m.Transpose {
			if len(p.Shape) != 2 {
				return nil, nil, fmt.Errorf("export: parameter %q of shape %v is not a matrix", p.Name, p.Shape)
			}
			t.Shape = []int{p.Shape[1], p.Shape[0]}
			t.Data = transpose(p.Data, p.Shape[0], p.Shape[1])
		}
		out = append(out, t)
	}
	learnEps := c.Config.LearnEps
	if kind == "gin" && !learnEps {
		// A fixed ε is 0, and GINConv keeps it as a buffer.
		for l := 0; l < c.Config.Layers; l++ {
			out = append(out, Tensor{Name: fmt.Sprintf("convs.%d.eps", l), Shape: []int{1}, Data: []float32{0}})
		}
	}
	if kind == "gat" {
		if err := gatComplete(c); err != nil {
			return nil, nil, err
		}
	}
	class := map[string]string{"sage": "GraphSAGE", "gcn": "GCN", "gin": "GIN", "gat": "GAT"}[kind]
	meta := map[string]string{
		"format":      "pt",
		"pyg_model":   "torch_geometric.nn.models." + class,
		"in_channels": fmt.Sprint(c.Config.InDim), "hidden_channels": fmt.Sprint(c.Config.Hidden),
		"out_channels": fmt.Sprint(c.Config.Classes), "num_layers": fmt.Sprint(c.Config.Layers),
	}
	if kind == "gin" {
		meta["train_eps"] = fmt.Sprint(learnEps)
		ginMeta(c.Config, meta)
	}
	if kind == "gat" {
		gatMeta(c.Config, meta)
	}
	normJKMeta(c.Config, meta)
	return out, meta, nil
}

func find(names []pygName, suffix string) (pygName, bool) {
	for _, n := range names {
		if n.Suffix == suffix {
			return n, true
		}
	}
	return pygName{}, false
}

// transpose returns the [cols, rows] transpose of the row-major [rows, cols] a.
func transpose(a []float32, rows, cols int) []float32 {
	out := make([]float32, len(a))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			out[c*rows+r] = a[r*cols+c]
		}
	}
	return out
}

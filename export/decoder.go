package export

import "fmt"

// Sequential maps an MLP decoder's layers, each a weight [in, out]
// (row-major, fanout's layout) and a bias [1, out] or [out], to the state
// dict of torch.nn.Sequential(Linear, ReLU, Linear, ...): layer i's
// tensors become "2i.weight" [out, in] and "2i.bias" [out] (the ReLUs
// between them hold none). params alternate weight and bias.
func Sequential(params []Param) ([]Tensor, error) {
	if len(params)%2 != 0 {
		return nil, fmt.Errorf("export: %d decoder tensors, want a weight and a bias per layer", len(params))
	}
	var out []Tensor
	for i := 0; i < len(params); i += 2 {
		w, b := params[i], params[i+1]
		if len(w.Shape) != 2 || len(w.Data) != w.Shape[0]*w.Shape[1] {
			return nil, fmt.Errorf("export: decoder weight %q of shape %v is not a matrix of %d values", w.Name, w.Shape, len(w.Data))
		}
		if len(b.Data) != w.Shape[1] {
			return nil, fmt.Errorf("export: decoder bias %q has %d values, its weight %d columns", b.Name, len(b.Data), w.Shape[1])
		}
		out = append(out,
			Tensor{Name: fmt.Sprintf("%d.weight", i), Shape: []int{w.Shape[1], w.Shape[0]}, Data: transpose(w.Data, w.Shape[0], w.Shape[1])},
			Tensor{Name: fmt.Sprintf("%d.bias", i), Shape: []int{w.Shape[1]}, Data: b.Data})
	}
	return out, nil
}

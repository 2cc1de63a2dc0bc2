package train

import "github.com/fanout-gnn/fanout/featstore"

// Floor is the least work a step must do, from its live sizes: the FLOPs of
// its matrix products and the fewest bytes it must move through memory.
type Floor struct {
	GFLOP float64 `json:"gflop"` // forward and backward matrix products
	GB    float64 `json:"gb"`    // gather, aggregation, activations, Adam
}

// StepFloor counts a step's work for the trainer's model at the mean live
// sizes blocks (bottom first). Matrix products: each layer's forward
// products as the model counts them (nn.Config.LayerWork); backward doubles
// the forward work except that the bottom layer computes no input
// gradient. Bytes: feature
// rows gathered (read from the table, written as float32; none where the
// bottom layer reads the table, or a tiered store's cache, in place), each layer's aggregation (every
// sampled edge reads a source row, of the table's element size where the
// bottom layer reads the table; backward writes it), bias/activation/
// dropout over the outputs forward and backward, and Adam reading and
// writing parameters, gradients and moments.
func (t *Trainer) StepFloor(blocks []BlockSize) Floor {
	mc := t.model.Config()
	const f32 = 4.0
	var flop, bytes float64
	inPlace := t.tableInput() != nil
	feat := f32
	if d, ok := t.in.Feat.(featstore.Direct); ok {
		feat = float64(d.DeviceTable().DType().Size())
	}
	if s := t.tieredInput(); s != nil {
		// The cache read in place; the misses' gather (the host tier's
		// rows, a small share where the cache serves) is not counted.
		inPlace = true
		feat = float64(s.DType().Size())
	}
	if len(blocks) > 0 && !inPlace {
		bytes += blocks[0].Src * float64(mc.InDim) * (feat + f32)
	}
	for l, b := range blocks {
		_, o := mc.Dims(l)
		out := float64(o)
		w := mc.LayerWork(l, b.Dst, b.Src)
		flop += w.FLOP * 2 // forward + weight gradients
		rowBytes := f32
		if l == 0 && inPlace {
			rowBytes = feat
		}
		agg := (b.Edges + b.Dst) * float64(w.AggWidth) * rowBytes
		bytes += agg + 4*b.Dst*out*f32
		if l > 0 {
			flop += w.FLOP // input gradients
			bytes += agg + b.Edges*float64(w.AggWidth)*f32
		}
	}
	var params float64
	for _, p := range t.model.Params() {
		params += float64(p.W.Len())
	}
	bytes += params * 7 * f32 // read w, g, m, v; write w, m, v
	return Floor{GFLOP: flop / 1e9, GB: bytes / 1e9}
}

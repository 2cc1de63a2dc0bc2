package link

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/export"
)

// Backend is the backend the trainer runs on.
func (t *Trainer) Backend() backend.Backend { return t.be }

// DatasetName is the name of the trainer's dataset.
func (t *Trainer) DatasetName() string { return t.ds.Name }

// EmbedDim is the width of an embedding.
func (t *Trainer) EmbedDim() int { return t.cfg.embed() }

// weights are the learnt tensors' buffers: the model's, then the
// decoder's.
func (t *Trainer) weights() []backend.Buffer {
	var ws []backend.Buffer
	for _, p := range t.m.Params() {
		ws = append(ws, p.W)
	}
	for _, p := range t.dec.params {
		ws = append(ws, p.W)
	}
	return ws
}

// keepBest copies every learnt tensor to the host: the model that
// evaluate found best so far.
func (t *Trainer) keepBest() {
	ws := t.weights()
	t.best = make([][]float32, len(ws))
	for i, w := range ws {
		t.best[i] = make([]float32, w.Len())
		t.be.Read(t.best[i], w, 0)
	}
}

// UseBest loads the model with the best validation ROC-AUC (the last
// evaluated one without validation edges) back into the trainer, for
// Embeddings, ScorePairs and the exports. Training on afterwards goes on
// from it.
func (t *Trainer) UseBest() error {
	if t.best == nil {
		return fmt.Errorf("link: no model evaluated yet")
	}
	for i, w := range t.weights() {
		t.be.Write(w, 0, t.best[i])
	}
	return t.be.Sync()
}

// ScorePairs scores vertex pairs (flat [pairs, 2]) with the trainer's
// model and decoder, from every vertex's embedding emb (Embeddings).
func (t *Trainer) ScorePairs(emb []float32, pairs []int32) ([]float32, error) {
	n := int32(t.ds.Graph.NumNodes)
	for i, v := range pairs {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("pair %d has vertex %d, want [0, %d)", i/2, v, n)
		}
	}
	hd, dim := t.dec.host(), t.cfg.embed()
	out := make([]float32, len(pairs)/2)
	for i := range out {
		u, v := int(pairs[2*i]), int(pairs[2*i+1])
		out[i] = float32(hd.score(emb[u*dim:(u+1)*dim], emb[v*dim:(v+1)*dim]))
	}
	return out, nil
}

// EncoderTensors are the model's weights under PyTorch Geometric's names
// (export.PyG), with its metadata.
func (t *Trainer) EncoderTensors() ([]export.Tensor, map[string]string, error) {
	c := &checkpoint.Checkpoint{Config: t.cfg.Config, Model: t.m.Config(), Dataset: checkpoint.Fingerprint(t.ds)}
	for _, p := range t.m.Params() {
		c.Params = append(c.Params, checkpoint.ParamInfo{Name: p.Name, Shape: p.Shape})
		w := make([]float32, p.W.Len())
		t.be.Read(w, p.W, 0)
		c.Data = append(c.Data, [3][]float32{w, nil, nil})
	}
	if err := t.be.Sync(); err != nil {
		return nil, nil, err
	}
	return export.PyG(c)
}

// DecoderTensors are the MLP decoder's weights as the state dict of
// torch.nn.Sequential(Linear(embed, width), ReLU(), Linear(width, 1))
// ("0.weight" [width, embed], "0.bias", "2.weight" [1, width], "2.bias"),
// applied to the element-wise product of two embeddings; the dot decoder
// has none.
func (t *Trainer) DecoderTensors() ([]export.Tensor, error) {
	if t.cfg.Decoder != DecoderMLP {
		return nil, nil
	}
	hd := t.dec.host()
	if err := t.be.Sync(); err != nil {
		return nil, err
	}
	transpose := func(w []float32, rows, cols int) []float32 { // [rows, cols] to [cols, rows]
		out := make([]float32, len(w))
		for r := range rows {
			for c := range cols {
				out[c*rows+r] = w[r*cols+c]
			}
		}
		return out
	}
	return []export.Tensor{
		{Name: "0.weight", Shape: []int{hd.width, hd.dim}, Data: transpose(hd.w1, hd.dim, hd.width)},
		{Name: "0.bias", Shape: []int{hd.width}, Data: hd.b1},
		{Name: "2.weight", Shape: []int{1, hd.width}, Data: hd.w2},
		{Name: "2.bias", Shape: []int{1}, Data: hd.b2},
	}, nil
}

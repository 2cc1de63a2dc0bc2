package link

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/train"
)

// initStream is the Philox stream of the MLP decoder's initialisation
// (nn's layers use 200 + layer).
const initStream = 240

// decoderPrefix names the decoder's tensors among a run's parameters (and
// in its checkpoints): "decoder.lin1.weight" [embed, width],
// "decoder.lin1.bias" [1, width], "decoder.lin2.weight" [width, 1],
// "decoder.lin2.bias" [1, 1].
const decoderPrefix = "decoder."

// decoder scores pairs from their embeddings' elementwise products h
// (PairProduct): the dot decoder sums a product's columns (a product with
// a column of ones), the MLP decoder is Linear(embed, width), ReLU,
// Linear(width, 1) with biases, as PyTorch Geometric's link predictors.
type decoder struct {
	be      backend.Backend
	kind    string
	dim     int // embedding width
	width   int // MLP hidden width
	ones    backend.Buffer
	params  []*nn.Param // w1, b1, w2, b2 (MLP), each [rows, cols], named as checkpoints save them (decoderPrefix)
	z1, dz1 backend.Buffer
	owned   []backend.Buffer
}

func newDecoder(be backend.Backend, kind string, dim, width, pairCap int, seed uint64) (*decoder, error) {
	d := &decoder{be: be, kind: kind, dim: dim, width: width}
	var err error
	alloc := func(n int) backend.Buffer {
		if err != nil {
			return nil
		}
		var b backend.Buffer
		if b, err = be.Alloc(backend.F32, max(n, 1)); err == nil {
			d.owned = append(d.owned, b)
		}
		return b
	}
	if kind == train.DecoderDot {
		d.ones = alloc(dim)
		if err == nil {
			be.Fill(d.ones, 1)
		}
		return d, err
	}
	for _, s := range []struct {
		name       string
		rows, cols int
	}{{"lin1.weight", dim, width}, {"lin1.bias", 1, width}, {"lin2.weight", width, 1}, {"lin2.bias", 1, 1}} {
		p := &nn.Param{Name: decoderPrefix + s.name, Shape: []int{s.rows, s.cols}}
		p.W, p.G, p.M, p.V = alloc(s.rows*s.cols), alloc(s.rows*s.cols), alloc(s.rows*s.cols), alloc(s.rows*s.cols)
		d.params = append(d.params, p)
	}
	d.z1, d.dz1 = alloc(pairCap*width), alloc(pairCap*width)
	if err != nil {
		d.free()
		return nil, fmt.Errorf("decoder: %w", err)
	}
	for l, p := range []*nn.Param{d.params[0], d.params[2]} { // Glorot-uniform weights, zero biases
		rows, cols := p.Shape[0], p.Shape[1]
		a := float32(math.Sqrt(6 / float64(rows+cols)))
		host := make([]float32, rows*cols)
		rng.Key{Seed: seed, Stream: uint32(initStream + l)}.FillUniform(host, cols, -a, a)
		be.Write(p.W, 0, host)
	}
	return d, nil
}

func (d *decoder) free() {
	for _, b := range d.owned {
		d.be.Free(b)
	}
	d.owned = nil
}

// forward writes the scores (F32 [n.Cap]) of the products h (F32
// [n.Cap, dim]); the MLP decoder's hidden rows go to z1 (F32 [n.Cap,
// width]: the step's own, d.z1, or evaluation's; nil for the dot
// decoder).
func (d *decoder) forward(h backend.Buffer, n backend.Count, scores, z1 backend.Buffer) {
	if d.kind == train.DecoderDot {
		d.be.Linear(h, n, d.ones, d.dim, 1, scores, false)
		return
	}
	w1, b1, w2, b2 := d.params[0], d.params[1], d.params[2], d.params[3]
	d.be.Linear(h, n, w1.W, d.dim, d.width, z1, false)
	d.be.BiasActDropout(z1, n, d.width, b1.W, true, 0, backend.Rand{}, nil, z1)
	d.be.Linear(z1, n, w2.W, d.width, 1, scores, false)
	d.be.BiasActDropout(scores, n, 1, b2.W, false, 0, backend.Rand{}, nil, scores)
}

// hiddenWidth is the width of the MLP decoder's hidden rows (z1), 0 for
// the dot decoder.
func (d *decoder) hiddenWidth() int {
	if d.kind == train.DecoderDot {
		return 0
	}
	return d.width
}

// backward writes dh from the scores' gradient (consumed in place) and the
// parameters' gradients.
func (d *decoder) backward(h backend.Buffer, n backend.Count, dscores, dh backend.Buffer) {
	if d.kind == train.DecoderDot {
		d.be.LinearBackwardData(dscores, n, d.ones, d.dim, 1, dh, false)
		return
	}
	w1, b1, w2, b2 := d.params[0], d.params[1], d.params[2], d.params[3]
	d.be.BiasActDropoutBackward(dscores, nil, n, 1, false, 0, nil, dscores, b2.G)
	d.be.LinearBackwardWeight(d.z1, dscores, n, d.width, 1, w2.G, false)
	d.be.LinearBackwardData(dscores, n, w2.W, d.width, 1, d.dz1, false)
	d.be.BiasActDropoutBackward(d.dz1, d.z1, n, d.width, true, 0, nil, d.dz1, b1.G)
	d.be.LinearBackwardWeight(h, d.dz1, n, d.dim, d.width, w1.G, false)
	d.be.LinearBackwardData(d.dz1, n, w1.W, d.dim, d.width, dh, false)
}

// hostDecoder scores pairs of host embeddings in float64, as the device
// decoder does (evaluation).
type hostDecoder struct {
	kind           string
	dim, width     int
	w1, b1, w2, b2 []float32
}

// host reads the decoder's parameters back.
func (d *decoder) host() *hostDecoder {
	hd := &hostDecoder{kind: d.kind, dim: d.dim, width: d.width}
	if d.kind == train.DecoderDot {
		return hd
	}
	read := func(p *nn.Param) []float32 {
		s := make([]float32, p.Size())
		d.be.Read(s, p.W, 0)
		return s
	}
	hd.w1, hd.b1, hd.w2, hd.b2 = read(d.params[0]), read(d.params[1]), read(d.params[2]), read(d.params[3])
	return hd
}

// score is the decoder's score of embeddings a and b.
func (hd *hostDecoder) score(a, b []float32) float64 {
	if hd.kind == train.DecoderDot {
		var s float64
		for j := range a {
			s += float64(a[j]) * float64(b[j])
		}
		return s
	}
	out := float64(hd.b2[0])
	for c := 0; c < hd.width; c++ {
		z := float64(hd.b1[c])
		for j := range a {
			z += float64(a[j]) * float64(b[j]) * float64(hd.w1[j*hd.width+c])
		}
		out += max(z, 0) * float64(hd.w2[c])
	}
	return out
}

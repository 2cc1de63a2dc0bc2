package nn

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// initStream is the first Philox stream of parameter initialisation: the
// weights of model layer l use stream initStream+l.
const initStream = 200

// Param is one learnable tensor and its optimizer state, all F32 buffers of
// Len = product of Shape, owned by the model that made them.
type Param struct {
	Name  string // e.g. "layer0.w_self"
	Shape []int  // [in, out] for a weight, [out] for a bias
	W     backend.Buffer
	G     backend.Buffer // gradient, filled by Model.Backward (overwritten)
	M     backend.Buffer // Adam first moment
	V     backend.Buffer // Adam second moment
}

// Size is the number of elements.
func (p *Param) Size() int {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	return n
}

// newParam allocates W, G, M and V (zeroed) for a parameter of the given
// shape; on failure it frees what it allocated.
func newParam(be backend.Backend, name string, shape ...int) (*Param, error) {
	p := &Param{Name: name, Shape: shape}
	n := p.Size()
	for _, dst := range []*backend.Buffer{&p.W, &p.G, &p.M, &p.V} {
		b, err := be.Alloc(backend.F32, n)
		if err != nil {
			p.free(be)
			return nil, fmt.Errorf("nn: allocating parameter %s %v: %w", name, shape, err)
		}
		*dst = b
	}
	return p, nil
}

// free releases the parameter's buffers.
func (p *Param) free(be backend.Backend) {
	for _, b := range []*backend.Buffer{&p.W, &p.G, &p.M, &p.V} {
		if *b != nil {
			be.Free(*b)
			*b = nil
		}
	}
}

// initGlorot fills the weight p ([in, out]) with Glorot/Xavier-uniform values
// U(-a, a), a = sqrt(6/(in+out)), computed on the host and written: element
// (row, col) is rng.UniformFloat of word (row, col) of the key (seed, epoch 0,
// step = slot, stream = initStream+layer), where slot numbers the weights of
// one layer (0, 1, ...).
func initGlorot(be backend.Backend, p *Param, seed uint64, layer, slot int) {
	in, out := p.Shape[0], p.Shape[1]
	a := float32(math.Sqrt(6 / float64(in+out)))
	host := make([]float32, in*out)
	key := rng.Key{Seed: seed, Step: uint32(slot), Stream: uint32(initStream + layer)}
	key.FillUniform(host, out, -a, a)
	be.Write(p.W, 0, host)
}

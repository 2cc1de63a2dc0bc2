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
	// Buffer marks state saved with the model that is not learned
	// (batch normalisation's running statistics): Backward gives it no
	// gradient and Update leaves it to the op that keeps it.
	Buffer bool

	owns []backend.Buffer // what free releases (views of a stacked block own nothing)
}

// Size is the number of elements.
func (p *Param) Size() int {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	return n
}

// paramAlloc gives a model's parameters their buffers: each parameter its
// own four (arena unset), or views of four arenas (W, G, M, V) that hold
// every parameter of the model back to back, in the order they are made,
// so that all gradients are one buffer (Model.Grads) that a group
// all-reduces in one call. Either way it counts the elements asked for.
type paramAlloc struct {
	be    backend.Backend
	arena [4]backend.Buffer // W, G, M, V: F32 [total] each, or nil
	off   int               // elements of the arenas handed out
	total int               // elements asked for
}

// paramAlign is the elements each parameter's views start on (256 bytes,
// as the driver aligns allocations): kernels load rows and biases in
// 16-byte words.
const paramAlign = 64

// ownParams allocates each parameter its own buffers.
func ownParams(be backend.Backend) *paramAlloc { return &paramAlloc{be: be} }

// arenaParams allocates four zeroed arenas of n elements to hand out.
func arenaParams(be backend.Backend, n int) (*paramAlloc, error) {
	a := &paramAlloc{be: be}
	for i := range a.arena {
		b, err := be.Alloc(backend.F32, max(n, 1))
		if err != nil {
			a.free()
			return nil, fmt.Errorf("nn: allocating the parameters (%d values): %w", n, err)
		}
		a.arena[i] = b
	}
	return a, nil
}

// free releases the arenas (the parameters' views go with them).
func (a *paramAlloc) free() {
	for i, b := range a.arena {
		if b != nil {
			a.be.Free(b)
			a.arena[i] = nil
		}
	}
}

// newParam makes W, G, M and V (zeroed) for a parameter of the given
// shape; on failure it frees what it allocated.
func newParam(a *paramAlloc, name string, shape ...int) (*Param, error) {
	p := &Param{Name: name, Shape: shape}
	n := p.Size()
	a.total += (n + paramAlign - 1) / paramAlign * paramAlign
	dsts := []*backend.Buffer{&p.W, &p.G, &p.M, &p.V}
	if a.arena[0] != nil {
		if a.off+n > a.arena[0].Len() {
			return nil, fmt.Errorf("nn: parameter %s %v does not fit the %d values provisioned", name, shape, a.arena[0].Len())
		}
		for i, dst := range dsts {
			*dst = a.be.View(a.arena[i], a.off, n)
		}
		a.off += (n + paramAlign - 1) / paramAlign * paramAlign
		return p, nil
	}
	for _, dst := range dsts {
		b, err := a.be.Alloc(backend.F32, n)
		if err != nil {
			p.free(a.be)
			return nil, fmt.Errorf("nn: allocating parameter %s %v: %w", name, shape, err)
		}
		*dst = b
		p.owns = append(p.owns, b)
	}
	return p, nil
}

// newStacked allocates the weights named by names, each [in, out], as one
// block [len(names)·in, out] (rows of the first, then of the second, ...),
// so that one product with the stacked block does the work of one product
// per weight. It returns the block (its W and G are what the products use)
// and one Param per name whose buffers are views of the block; the first
// one's free releases the block, which owns nothing itself.
func newStacked(a *paramAlloc, names []string, in, out int) (block *Param, ps []*Param, err error) {
	be := a.be
	block, err = newParam(a, names[0], len(names)*in, out)
	if err != nil {
		return nil, nil, err
	}
	ps = make([]*Param, len(names))
	for k, name := range names {
		off, n := k*in*out, in*out
		ps[k] = &Param{Name: name, Shape: []int{in, out},
			W: be.View(block.W, off, n), G: be.View(block.G, off, n),
			M: be.View(block.M, off, n), V: be.View(block.V, off, n)}
	}
	ps[0].owns, block.owns = block.owns, nil
	return block, ps, nil
}

// free releases the buffers the parameter owns and forgets all of them.
func (p *Param) free(be backend.Backend) {
	for _, b := range p.owns {
		be.Free(b)
	}
	p.owns, p.W, p.G, p.M, p.V = nil, nil, nil, nil, nil
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

// initGlorotRows fills p ([rows, in·out]) with rows Glorot-uniform for an
// [in, out] weight each (RGCN's bases), as initGlorot does one: row k,
// element (i, j) is word (k·in + i, j) of the key (seed, step = slot,
// stream = initStream+layer).
func initGlorotRows(be backend.Backend, p *Param, seed uint64, layer, slot, in, out int) {
	a := float32(math.Sqrt(6 / float64(in+out)))
	host := make([]float32, p.Size())
	key := rng.Key{Seed: seed, Step: uint32(slot), Stream: uint32(initStream + layer)}
	key.FillUniform(host, out, -a, a)
	be.Write(p.W, 0, host)
}

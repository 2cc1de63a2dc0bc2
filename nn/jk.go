package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// Jumping knowledge (Xu et al. 2018) as PyTorch Geometric's BasicGNN has
// it (Config.JK): every graph layer is a hidden layer (Hidden wide, with
// bias, normalisation, ReLU and dropout), and a linear head maps to the
// classes
//
//	last: the top layer's output,
//	cat:  every layer's output, concatenated (bottom first),
//	max:  the element-wise maximum of every layer's output.
//
// A seed's output of any layer is that layer's row of the seed, among the
// first rows of every layer's output (destinations come first among a
// block's sources), so the head reads the first seed rows of each.
// Parameters: jk.w [in, Classes] (in = Layers·Hidden for cat, Hidden
// otherwise; PyG's lin.weight is its transpose) and jk.bias [Classes].

// Jumping knowledge modes accepted by Config.JK ("" is JKNone).
const (
	JKNone = "none"
	JKLast = "last"
	JKCat  = "cat"
	JKMax  = "max"
)

// jkStream is the initialisation stream of the head (initStream + layer
// streams stay below it: MaxLayers is 32).
const jkStream = initStream + MaxLayers

// jumps reports whether the model has jumping knowledge's head.
func (c Config) jumps() bool { return c.JK != "" && c.JK != JKNone }

// hiddenOut reports whether model layer l's output is a hidden one (bias,
// normalisation, ReLU, dropout): every layer's below the top, and the top
// one's too under jumping knowledge.
func (c Config) hiddenOut(l int) bool { return l < c.Layers-1 || c.jumps() }

// validateNormJK checks Norm and JK.
func (c Config) validateNormJK() error {
	switch c.Norm {
	case "", NormNone, NormBatch, NormLayer:
	default:
		return fmt.Errorf("nn: config Norm %q: want %q, %q or %q", c.Norm, NormNone, NormBatch, NormLayer)
	}
	switch c.JK {
	case "", JKNone, JKLast, JKCat, JKMax:
	default:
		return fmt.Errorf("nn: config JK %q: want %q, %q, %q or %q", c.JK, JKNone, JKLast, JKCat, JKMax)
	}
	if c.jumps() && c.Hidden <= 0 {
		return fmt.Errorf("nn: config Hidden %d: jumping knowledge %q needs a positive hidden width", c.Hidden, c.JK)
	}
	normed := c.Norm != "" && c.Norm != NormNone
	if (normed || c.jumps()) && (c.BF16Bottom || c.BF16Activations) {
		return fmt.Errorf("nn: config Norm %q, JK %q: normalisation and jumping knowledge need float32 activations (BF16Bottom %t, BF16Activations %t)",
			c.Norm, c.JK, c.BF16Bottom, c.BF16Activations)
	}
	return nil
}

// jkHead is the linear head of jumping knowledge.
type jkHead struct {
	be     backend.Backend
	jk     backend.JumpingKnowledge // for JKMax
	mode   string
	layers int
	hidden int
	w, b   *Param
	ws     []backend.Buffer // JKCat: w's rows of each layer, [Hidden, Classes]

	logits  backend.Buffer // F32 [seeds, Classes]
	dlogits backend.Buffer // F32 [seeds, Classes]
	maxOut  backend.Buffer // JKMax: F32 [seeds, Hidden]
	arg     backend.Buffer // JKMax: I32 [seeds, Hidden]
	dmax    backend.Buffer // JKMax: F32 [seeds, Hidden]
}

func newJK(be backend.Backend, pa *paramAlloc, cfg Config, seed uint64) (*jkHead, error) {
	if !cfg.jumps() {
		return nil, nil
	}
	h := &jkHead{be: be, mode: cfg.JK, layers: cfg.Layers, hidden: cfg.Hidden}
	if cfg.JK == JKMax {
		jk, err := backend.JumpingKnowledgeOf(be)
		if err != nil {
			return nil, fmt.Errorf("nn: jumping knowledge %q: %w", cfg.JK, err)
		}
		h.jk = jk
	}
	in := h.in()
	var err error
	if h.w, err = newParam(pa, "jk.w", in, cfg.Classes); err == nil {
		h.b, err = newParam(pa, "jk.bias", cfg.Classes)
	}
	if err != nil {
		h.free()
		return nil, err
	}
	a := float32(1 / math.Sqrt(float64(in))) // PyTorch's Linear: U(±1/sqrt(in))
	key := rng.Key{Seed: seed, Stream: jkStream}
	host := make([]float32, in*cfg.Classes)
	key.FillUniform(host, cfg.Classes, -a, a)
	be.Write(h.w.W, 0, host)
	if h.mode == JKCat {
		for l := range h.layers {
			n := h.hidden * cfg.Classes
			h.ws = append(h.ws, be.View(h.w.W, l*n, n))
		}
	}
	return h, nil
}

// in is the head's input width.
func (h *jkHead) in() int {
	if h.mode == JKCat {
		return h.layers * h.hidden
	}
	return h.hidden
}

func (h *jkHead) params() []*Param { return []*Param{h.w, h.b} }

func (h *jkHead) free() {
	for _, p := range []*Param{h.w, h.b} {
		if p != nil {
			p.free(h.be)
		}
	}
}

// reserve allocates the head's buffers for seeds rows.
func (h *jkHead) reserve(ws *workspace, seeds, classes int) {
	h.logits = ws.alloc("jumping knowledge logits", backend.F32, seeds*classes)
	h.dlogits = ws.allocRows("jumping knowledge logit gradients", backend.F32, seeds*classes)
	if h.mode == JKMax {
		h.maxOut = ws.alloc("jumping knowledge maximum", backend.F32, seeds*h.hidden)
		h.arg = ws.alloc("jumping knowledge maximum's layers", backend.I32, seeds*h.hidden)
		h.dmax = ws.allocRows("jumping knowledge maximum's gradient", backend.F32, seeds*h.hidden)
	}
}

// forward writes the logits of the seeds (rows [:n]) from the layers'
// outputs hid (each [≥ n.Cap, Hidden]).
func (h *jkHead) forward(hid []backend.Buffer, n backend.Count, classes int) {
	h.apply(hid, n, classes, h.maxOut, h.arg, h.logits)
}

// apply writes logits (F32 [n.Cap, Classes]) of rows [:n] of the layers'
// outputs hid, with maxOut and arg ([n.Cap, Hidden]) the maximum's
// scratch (JKMax).
func (h *jkHead) apply(hid []backend.Buffer, n backend.Count, classes int, maxOut, arg, logits backend.Buffer) {
	be, H := h.be, h.hidden
	switch h.mode {
	case JKCat:
		for l := range h.layers {
			be.Linear(rows(be, hid[l], n.Cap, H), n, h.ws[l], H, classes, logits, l > 0)
		}
	case JKMax:
		for l := range h.layers {
			h.jk.LayerMax(rows(be, hid[l], n.Cap, H), n, H, l, l == 0, maxOut, arg)
		}
		be.Linear(maxOut, n, h.w.W, H, classes, logits, false)
	default:
		be.Linear(rows(be, hid[h.layers-1], n.Cap, H), n, h.w.W, H, classes, logits, false)
	}
	be.BiasActDropout(logits, n, classes, h.b.W, false, 0, backend.Rand{}, nil, logits)
}

// HeadReads are the layers whose whole-graph outputs layer-wise inference
// must keep for Head: every layer's for jumping knowledge's cat and max,
// the top one's for last, none without jumping knowledge (the top layer's
// output is then the logits).
func (c Config) HeadReads() []int {
	switch {
	case !c.jumps():
		return nil
	case c.JK == JKLast:
		return []int{c.Layers - 1}
	}
	ls := make([]int, c.Layers)
	for l := range ls {
		ls[l] = l
	}
	return ls
}

// Head computes jumping knowledge's head over whole-graph tables: tables[l]
// is layer l's output for every vertex (F32 [rows, Hidden]; only the
// layers HeadReads names need be set), and out (F32 [rows, Classes])
// receives every vertex's logits. A model without jumping knowledge has no
// head (an error).
func (inf *Inference) Head(tables []backend.Buffer, rows int, out backend.Buffer) error {
	m := inf.m
	h := m.head
	if h == nil {
		return errors.New("nn: inference head: the model has no jumping knowledge")
	}
	if len(tables) != m.cfg.Layers {
		return fmt.Errorf("nn: inference head: %d tables for %d layers", len(tables), m.cfg.Layers)
	}
	for _, l := range m.cfg.HeadReads() {
		if b := tables[l]; b == nil || b.DType() != backend.F32 || b.Len() < rows*h.hidden {
			return fmt.Errorf("nn: inference head: table %d must be F32 [%d, %d]", l, rows, h.hidden)
		}
	}
	if out == nil || out.DType() != backend.F32 || out.Len() < rows*m.cfg.Classes {
		return fmt.Errorf("nn: inference head: out must be F32 [%d, %d]", rows, m.cfg.Classes)
	}
	var ws workspace
	ws.be = m.be
	defer ws.release()
	cnt := ws.alloc("inference head count", backend.I32, 1)
	var maxOut, arg backend.Buffer
	if h.mode == JKMax {
		maxOut = ws.alloc("inference head maximum", backend.F32, rows*h.hidden)
		arg = ws.alloc("inference head maximum's layers", backend.I32, rows*h.hidden)
	}
	if ws.err != nil {
		return ws.err
	}
	m.be.Write(cnt, 0, []int32{int32(rows)})
	h.apply(tables, backend.Count{Buf: cnt, Cap: rows}, m.cfg.Classes, maxOut, arg, out)
	return m.be.Sync()
}

// backward overwrites the head's gradients from dlogits (rows [:n]) and
// writes the top layer's output gradient dTop (overwritten); the lower
// layers' shares are added by addLower as the backward pass reaches them.
func (h *jkHead) backward(hid []backend.Buffer, n backend.Count, classes int, dTop backend.Buffer) {
	be, H := h.be, h.hidden
	be.BiasActDropoutBackward(h.dlogits, nil, n, classes, false, 0, nil, h.dlogits, h.b.G)
	switch h.mode {
	case JKCat:
		for l := range h.layers {
			gl := be.View(h.w.G, l*H*classes, H*classes)
			be.LinearBackwardWeight(rows(be, hid[l], n.Cap, H), h.dlogits, n, H, classes, gl, false)
		}
		be.LinearBackwardData(h.dlogits, n, h.ws[h.layers-1], H, classes, dTop, false)
	case JKMax:
		be.LinearBackwardWeight(h.maxOut, h.dlogits, n, H, classes, h.w.G, false)
		be.LinearBackwardData(h.dlogits, n, h.w.W, H, classes, h.dmax, false)
		h.jk.LayerMaxBackward(h.dmax, h.arg, n, H, h.layers-1, false, dTop)
	default:
		be.LinearBackwardWeight(rows(be, hid[h.layers-1], n.Cap, H), h.dlogits, n, H, classes, h.w.G, false)
		be.LinearBackwardData(h.dlogits, n, h.w.W, H, classes, dTop, false)
	}
}

// addLower adds the head's share of the gradient of layer l's output (l
// below the top) to its first rows [:n] of dAct.
func (h *jkHead) addLower(l int, n backend.Count, classes int, dAct backend.Buffer) {
	switch h.mode {
	case JKCat:
		h.be.LinearBackwardData(h.dlogits, n, h.ws[l], h.hidden, classes, dAct, true)
	case JKMax:
		h.jk.LayerMaxBackward(h.dmax, h.arg, n, h.hidden, l, true, dAct)
	}
}

// reads reports whether the head reads layer l's output below the top
// (cat and max): the gradient of that output then has a second share.
func (h *jkHead) reads(l int) bool {
	return h != nil && l < h.layers-1 && (h.mode == JKCat || h.mode == JKMax)
}

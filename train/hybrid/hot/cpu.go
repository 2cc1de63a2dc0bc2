package hot

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
)

// chunk is the number of hot vertices the CPU computes at once.
const chunk = 16384

// cpuRows computes hot vertices' bottom-layer rows on a CPU backend (their
// aggregated inputs, or their outputs): a copy
// of the model whose weights each super-batch sets, the graph, features
// (as the dataset holds them: float32, or bfloat16, which the layer's
// gather widens, so the rows see the values the GPU's bfloat16 table
// holds) and degrees used in place, and one block per chunk of hot vertices,
// sampled as the step's bottom hop samples (stream L-1) with the clock of
// the super-batch's first step.
type cpuRows struct {
	be     backend.Backend
	in     *train.Inputs // graph and degrees
	feat   backend.Buffer
	model  *nn.Model
	inf    *nn.Inference
	ids    []int32
	fanout int
	stream uint32
	seed   uint64
	dim    int
	inputs bool // rows are aggregated inputs (nn.Inference.LayerNeighbours), else outputs

	seeds, counts, clock, out, dh backend.Buffer
	blk                           *backend.Block
}

func newCPURows(ds *dataset.Dataset, cfg train.Config, m *nn.Model, ids []int32, inputs bool, opt Options) (*cpuRows, error) {
	be, err := opt.NewCPU()
	if err != nil {
		return nil, fmt.Errorf("hot vertices: the CPU backend: %w", err)
	}
	L := len(cfg.Fanouts)
	h := &cpuRows{be: be, ids: ids, fanout: cfg.Fanouts[L-1], stream: uint32(L - 1), seed: cfg.Seed, inputs: inputs}
	in, out := m.Config().Dims(0)
	h.dim = out
	if inputs {
		h.dim = in
	}
	if h.in, err = train.UploadWith(be, ds, nil); err != nil {
		return nil, fmt.Errorf("hot vertices: %w", err)
	}
	if h.feat, err = be.Upload(ds.FeatureTable()); err != nil {
		return nil, fmt.Errorf("hot vertices: %w", err)
	}
	if h.model, err = nn.NewModel(be, m.Config(), cfg.Seed); err != nil {
		return nil, fmt.Errorf("hot vertices: %w", err)
	}
	c := h.caps(ds)
	if h.inf, err = h.model.NewInference(c); err != nil {
		return nil, fmt.Errorf("hot vertices: %w", err)
	}
	if err := h.alloc(c); err != nil {
		return nil, fmt.Errorf("hot vertices: %w", err)
	}
	return h, nil
}

// caps is the envelope of one chunk: its destinations, the most edges any
// chunk samples, and every source they can have.
func (h *cpuRows) caps(ds *dataset.Dataset) nn.Caps {
	n := max(1, min(chunk, len(h.ids)))
	edges := 0
	for c0 := 0; c0 < len(h.ids); c0 += n {
		e := 0
		for _, v := range h.ids[c0:min(len(h.ids), c0+n)] {
			d := int(ds.Graph.Degree(int64(v)))
			if h.fanout >= 0 {
				d = min(d, h.fanout)
			}
			e += d
		}
		edges = max(edges, e)
	}
	edges = max(edges, 1)
	return nn.Caps{Dst: n, Edges: edges, Src: n + edges}
}

func (h *cpuRows) alloc(c nn.Caps) error {
	var err error
	a := func(dt backend.DType, n int) backend.Buffer {
		if err != nil {
			return nil
		}
		var b backend.Buffer
		b, err = h.be.Alloc(dt, n)
		return b
	}
	h.seeds, h.counts, h.clock = a(backend.I32, c.Dst), a(backend.I32, 3), a(backend.I32, 2)
	h.out, h.dh = a(backend.F32, c.Dst*h.dim), a(backend.F32, c.Dst*h.dim)
	h.blk = &backend.Block{
		Indptr: a(backend.I32, c.Dst+1), Nbrs: a(backend.I32, c.Edges), Indices: a(backend.I32, c.Edges),
		SrcIDs: a(backend.I32, c.Src),
	}
	if err != nil {
		return err
	}
	h.blk.NumDst = backend.Count{Buf: h.counts, Off: 0, Cap: c.Dst}
	h.blk.NumEdges = backend.Count{Buf: h.counts, Off: 1, Cap: c.Edges}
	h.blk.NumSrc = backend.Count{Buf: h.counts, Off: 2, Cap: c.Src}
	return nil
}

// rows computes the hot vertices' rows (out: [len(ids), dim]) with the
// weights w (the model's Params in order; nil for inputs, which need
// none), sampling with the clock (epoch, step).
func (h *cpuRows) rows(w [][]float32, epoch, step int, out []float32) error {
	return h.each(w, epoch, step, nil, func(c0, k int) {
		h.be.Read(out[c0*h.dim:(c0+k)*h.dim], h.out, 0)
	})
}

// grads computes the hot rows' share of layer 0's weight gradient (in
// LayerWeights(0) order) from their output gradient dh ([len(ids), dim]),
// with the blocks and weights rows used. Chunks whose gradient is all zero
// (no step of the super-batch reached them) are skipped.
func (h *cpuRows) grads(w [][]float32, epoch, step int, dh []float32) ([][]float32, error) {
	ws := h.model.LayerWeights(0)
	sums := make([][]float32, len(ws))
	tmp := make([][]float32, len(ws))
	for i, p := range ws {
		sums[i], tmp[i] = make([]float32, p.W.Len()), make([]float32, p.W.Len())
	}
	var ferr error
	err := h.each(w, epoch, step, dh, func(c0, k int) {
		h.be.Write(h.dh, 0, dh[c0*h.dim:(c0+k)*h.dim])
		if err := h.inf.LayerPreBackward(0, h.blk, h.dh); err != nil && ferr == nil {
			ferr = err
		}
		for i, p := range ws {
			h.be.Read(tmp[i], p.G, 0)
			for j, v := range tmp[i] {
				sums[i][j] += v
			}
		}
	})
	if err == nil {
		err = ferr
	}
	return sums, err
}

// each sets the weights and runs layer 0 over every chunk of hot vertices
// (those with a non-zero row of skipIfZero, when given), then calls then
// with the chunk's first row and size.
func (h *cpuRows) each(w [][]float32, epoch, step int, skipIfZero []float32, then func(c0, k int)) error {
	if w != nil {
		for i, p := range h.model.Params() {
			h.be.Write(p.W, 0, w[i])
		}
	}
	h.be.Write(h.clock, 0, []int32{int32(epoch), int32(step)})
	r := backend.Rand{Seed: h.seed, Stream: h.stream, Clock: h.clock}
	n := h.blk.NumDst.Cap
	for c0 := 0; c0 < len(h.ids); c0 += n {
		k := min(n, len(h.ids)-c0)
		if skipIfZero != nil && allZero(skipIfZero[c0*h.dim:(c0+k)*h.dim]) {
			continue
		}
		h.be.Write(h.seeds, 0, h.ids[c0:c0+k])
		h.be.Write(h.counts, 0, []int32{int32(k)})
		h.be.SampleLayer(h.in.Graph, h.seeds, h.blk.NumDst, h.fanout, r, h.blk)
		h.be.Relabel(h.in.Graph, h.blk)
		layer := h.inf.LayerPre
		if h.inputs {
			layer = h.inf.LayerNeighbours
		}
		if err := layer(0, h.blk, h.feat, h.in.Degree, h.out); err != nil {
			return fmt.Errorf("hot vertices: %w", err)
		}
		then(c0, k)
	}
	if err := h.be.Sync(); err != nil {
		return fmt.Errorf("hot vertices: the CPU's work: %w", err)
	}
	return h.model.Err()
}

func allZero(s []float32) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

func (h *cpuRows) close() {
	if h.inf != nil {
		h.inf.Free()
	}
	if h.model != nil {
		h.model.Free()
	}
	if c, ok := h.be.(backend.Closer); ok {
		c.Close()
	}
}

// Package nn holds the graph neural network models trained by fanout: layers
// with explicit Forward and Backward passes over sampled blocks (GraphSAGE
// mean, GCN, GIN, GAT), bias+ReLU+dropout between layers, softmax
// cross-entropy, and Adam. Every computation is a backend op on buffers
// allocated up front (by NewModel and Reserve), and no live count is read
// back to the host, so the same code runs eagerly on the CPU, on a GPU, and
// inside a captured graph.
package nn

import (
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// dropoutStream is the Philox stream of dropout at model layer 0; layer l
// uses dropoutStream+l.
const dropoutStream = 128

// layer is one graph layer without its bias (the model applies the bias with
// BiasActDropout). Buffers passed in are sized by the reserved Caps.
type layer interface {
	params() []*Param
	bias() *Param
	reserve(c Caps) error
	release()
	workspace() *workspace
	// prepare computes per-block edge weights (deg: F32 [N] full-graph degrees).
	prepare(blk *backend.Block, deg backend.Buffer)
	// forward writes h[:NumDst] (h [Dst, out]) from x [Src, in]; ps says
	// whether the pass trains (dropout inside the layer) and with which
	// seed and clock.
	forward(blk *backend.Block, x, h backend.Buffer, ps pass)
	// backward overwrites the weight gradients from dh [Dst, out] and, when
	// dx (F32 [Src, in]) is non-nil, overwrites dx rows [0, NumSrc). A
	// layer may put its weight gradients' products beside (besideWork).
	backward(blk *backend.Block, x, dh, dx backend.Buffer)
}

// pass is what a layer's forward learns of the pass it runs in. A layer
// with randomness of its own (GAT's attention dropout) draws it from rand
// with a stream of its own, and keeps what its backward needs to draw the
// same again.
type pass struct {
	train bool         // a training pass: dropout inside the layer applies
	rand  backend.Rand // the step's seed and clock; Stream and Keys are the layer's to set
	// hot, when set, holds hot destinations' neighbour terms (Hot's
	// Inputs) that the layer adds into its aggregate before its product.
	hot Hot
	// table: x is a feature table of every vertex, and source j's row is
	// x[blk.SrcIDs[j]] (layer 0 of a batch with Table; see tableReader).
	table bool
	// tiered: source j's row is in the tiered store's cache, or x's row j
	// (layer 0 of a batch with Tiered; see tableReader).
	tiered *Tiered
}

// gatherer is a layer whose input gradient is gathered by source and
// continues through the activation below it in the same pass (GraphSAGE
// above the bottom): transpose groups a training block's edges by source
// (issued beside the forward pass), and backwardAct is backward with that
// activation's backward folded in, writing the gradient before it.
type gatherer interface {
	transpose(blk *backend.Block)
	backwardAct(blk *backend.Block, dh backend.Buffer, act backend.ActGrad, dx backend.Buffer)
}

// halfReader is a layer that may read its input rows as bfloat16
// (Config.BF16Activations above the bottom; a batch's X at the bottom,
// Model.ReadsBF16Rows) where readsBF16 says it can.
type halfReader interface {
	readsBF16() bool
}

// readsHalf reports whether layer ly (nil: none) can read bfloat16 input
// rows.
func readsHalf(ly layer) bool {
	h, ok := ly.(halfReader)
	return ok && h.readsBF16()
}

// next is the layer above layer l, or nil for the top layer.
func (m *Model) next(l int) layer {
	if l+1 < len(m.layers) {
		return m.layers[l+1]
	}
	return nil
}

// tableReader is a layer that can read its input rows from a feature table
// by the block's source ids (pass.table), or from a tiered store's cache
// beside the gathered misses (pass.tiered), instead of from gathered rows.
type tableReader interface {
	readsTable()
}

// Batch is one sampled mini-batch in backend memory.
type Batch struct {
	Blocks []*backend.Block // [0] bottom ... [L-1] top (its destinations are the seeds)
	// X is the features of Blocks[0].SrcIDs, F32 [Blocks[0].NumSrc.Cap,
	// InDim], or BF16 for a model that ReadsBF16Rows.
	X backend.Buffer
	// Table, in place of X (X nil), is the feature table of every vertex
	// (F32 or BF16 [N, InDim]): layer 0 reads its sources' rows from it by
	// id, so they need no gather. Only for a model that ReadsTable.
	Table backend.Buffer
	// Tiered, with X, gives layer 0 the sources' rows in two tiers: source
	// j's row is in the tiered store's cache where its vertex has a slot,
	// and is row j of X (the gathered misses) otherwise, so cached rows
	// need no gather. Only for a model that ReadsTable.
	Tiered *Tiered
	Labels backend.Buffer // I32 [Blocks[L-1].NumDst.Cap]; label < 0 is ignored
	Degree backend.Buffer // F32 [N] full-graph degree per vertex (GCN only; may be nil for SAGE)
	// Typed, for a typed model (Config.Typed), holds the batch's
	// per-relation blocks and per-type rows instead of Blocks and X.
	Typed *TypedBatch
	// Share, when set, makes this batch one rank's share of a batch split
	// across ranks: Loss divides the summed loss by the whole batch's seeds.
	Share *Share
	// Hot, when set, gives the bottom-layer rows of hot vertices, computed
	// elsewhere (the hybrid mode's CPU), to a training pass.
	Hot Hot
	// Skip, when set, is an I32 flag (element 0): while it is non-zero,
	// what a training pass hands outside the model (Hot's TakeGradient)
	// is not kept (the replay driver's overflow flag: a step that is not
	// applied, and the warm-up before a capture, hand over nothing).
	Skip backend.Buffer
	// AfterBottom, when set, is called by a training Forward once the
	// bottom layer's forward pass is issued: work that the step does not
	// touch, put on the backend's second queue there (the replay driver's
	// sampling of the next step), runs beside the rest of the step, and
	// Backward, which joins only the pass's own work there (the
	// transposes, backend.JoinBesideTo), does not wait for it.
	AfterBottom func()
}

// Tiered are a tiered feature store's cache and slot table as a bottom
// layer reads them in place (featstore.InPlace), with the backend's ops
// that read them (AggregateConcatTiered).
type Tiered struct {
	Ops   backend.TieredGather
	Cache backend.Buffer // F32 or BF16 [cached rows, InDim]; nil when nothing is cached
	Slot  backend.Buffer // I32 [N]: a vertex's cache row, or -1
}

// Share names the live count that divides a rank's summed loss: Den, the
// whole batch's seeds (the rank's rows then get the gradients one device
// computes for them, and the ranks' losses add up to the batch's mean).
type Share struct {
	Den backend.Count
}

// Model is a stack of graph layers with its parameters and workspaces. It is
// not safe for concurrent use.
type Model struct {
	be     backend.Backend
	cfg    Config
	layers []layer
	norms  []*normLayer // per layer: the normalisation of its output, or nil (norm.go)
	head   *jkHead      // jumping knowledge's head, or nil (jk.go)
	params *paramAlloc  // the arenas the parameters are views of
	hetero *heteroNet   // a typed model's layers (Config.Typed), instead of layers

	// Workspaces, allocated by Reserve (per layer l, rows = caps[l].Dst).
	ws      workspace
	caps    []Caps
	act     []backend.Buffer // F32 [Dst, out_l] (BF16 for layer 0 below others with Config.BF16Bottom): layer output (after bias/act/dropout unless hid[l] is its own); act[L-1] = logits
	hid     []backend.Buffer // layer output after bias/act/dropout: act[l], or BF16 [Dst, out_l] (Config.BF16Activations)
	dAct    []backend.Buffer // F32 [Dst, out_l]: gradient of act; dAct[L-1] = dlogits; dAct[0] is nil where layer 1 writes dHalf (gatherer)
	mask    []backend.Buffer // U8 [Dst, out_l] for hidden layers when Dropout > 0, else nil
	dHalf   backend.Buffer   // BF16 [caps[0].Dst, out_0]: layer 0's output gradient, rounded (Config.BF16Bottom)
	xView   []backend.Buffer // layer l > 0: view of act[l-1] as [caps[l].Src, in_l]
	dxView  []backend.Buffer // layer l > 0: view of dAct[l-1] as [caps[l].Src, in_l]
	xDrop   backend.Buffer   // F32 [caps[0].Src, InDim]: input after dropout (InputDropout > 0)
	xMask   backend.Buffer   // U8 [caps[0].Src, InDim]: its mask
	loss    backend.Buffer   // F32 [1]
	correct backend.Buffer   // I32 [1]

	// Host state of the last Forward, used by Backward.
	dropP    []float32 // dropout probability applied at each layer
	xIn      backend.Buffer
	hot      Hot // the hot rows the last Forward used, for Backward
	haveLoss bool
	// transposed marks the transposes the last training Forward put beside
	// it (transposeBeside), which Backward joins.
	transposed backend.SideMark
	err        error
}

// NewModel validates cfg and allocates the parameters (Glorot-uniform
// weights from seed, zero biases, zero Adam moments) as views of one arena
// each for weights, gradients and moments (Grads). Call Reserve before
// Forward.
func NewModel(be backend.Backend, cfg Config, seed uint64) (*Model, error) {
	if be == nil {
		return nil, errors.New("nn: NewModel: nil backend")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkCapabilities(be, cfg); err != nil {
		return nil, err
	}
	// The layers say what they hold only as they are made: a first model
	// with parameters of their own counts the values, the second takes
	// them from arenas of that size.
	count := ownParams(be)
	first, err := buildModel(be, cfg, seed, count)
	if err != nil {
		return nil, err
	}
	first.Free()
	pa, err := arenaParams(be, count.total)
	if err != nil {
		return nil, err
	}
	m, err := buildModel(be, cfg, seed, pa)
	if err != nil {
		pa.free()
		return nil, err
	}
	m.params = pa
	return m, nil
}

// checkCapabilities says which capability of the backend cfg's layers need
// and be lacks: attention (backend.Attention) for GAT and RGAT.
func checkCapabilities(be backend.Backend, cfg Config) error {
	if attends(cfg.Kind) {
		if _, err := backend.AttentionOf(be); err != nil {
			return fmt.Errorf("nn: a %s model: %w", cfg.Kind, err)
		}
	}
	return nil
}

// buildModel makes the layers, their parameters from pa.
func buildModel(be backend.Backend, cfg Config, seed uint64, pa *paramAlloc) (*Model, error) {
	m := &Model{be: be, cfg: cfg, ws: workspace{be: be}}
	if cfg.Typed() {
		var err error
		if m.hetero, err = newHetero(be, cfg, seed, pa); err != nil {
			m.Free()
			return nil, err
		}
		return m, nil
	}
	for l := 0; l < cfg.Layers; l++ {
		in, out := cfg.dims(l)
		var ly layer
		var err error
		switch cfg.Kind {
		case KindGCN:
			ly, err = newGCN(be, pa, l, in, out, seed)
		case KindGIN:
			ly, err = newGINNormed(be, pa, cfg, l, in, out, seed)
		case KindGAT:
			ly, err = newGAT(be, pa, l, in, cfg, seed)
		default:
			ly, err = newSAGE(be, pa, l, in, out, seed, l == 0 && cfg.bf16Bottom())
		}
		if err != nil {
			m.Free()
			return nil, err
		}
		m.layers = append(m.layers, ly)
		nl, err := newNorm(be, pa, cfg, l, out)
		if err != nil {
			m.Free()
			return nil, err
		}
		m.norms = append(m.norms, nl)
	}
	var err error
	if m.head, err = newJK(be, pa, cfg, seed); err != nil {
		m.Free()
		return nil, err
	}
	m.dropP = make([]float32, cfg.Layers)
	return m, nil
}

// Grads is every parameter's gradient, back to back (F32, the sum of the
// parameters' sizes; each Param's G is a view of it): what a data-parallel
// group all-reduces, in one call.
func (m *Model) Grads() backend.Buffer {
	if m.params == nil {
		return nil
	}
	return m.be.View(m.params.arena[1], 0, m.params.off)
}

// ReadsTable reports whether a batch may give the input features as the
// whole table (Batch.Table), or in two tiers (Batch.Tiered), instead of
// gathered rows: the bottom layer reads its sources' rows in place
// (GraphSAGE's does), and no input dropout changes them first.
func (m *Model) ReadsTable() bool {
	if len(m.layers) == 0 || m.cfg.InputDropout > 0 {
		return false
	}
	_, ok := m.layers[0].(tableReader)
	return ok
}

// ReadsBF16Rows reports whether a batch's X may hold bfloat16 rows (the
// features as a bfloat16 table keeps them, gathered as they are: half the
// bytes moved and read): the bottom layer reads them widened, exactly.
func (m *Model) ReadsBF16Rows() bool {
	return m.hetero == nil && len(m.layers) > 0 && readsHalf(m.layers[0])
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Params returns every parameter, bottom layer first; within a layer the
// weights come before the bias (SAGE: w_self, w_neigh, bias; GCN: w, bias;
// GIN: w1, b1, w2, bias, eps when learned; GAT: w, att_src, att_dst, bias),
// then its normalisation's (norm.weight, norm.bias, and norm.running, a
// Buffer, for batch normalisation); jumping knowledge's head (jk.w,
// jk.bias) comes last.
func (m *Model) Params() []*Param {
	if m.hetero != nil {
		return m.hetero.params()
	}
	var ps []*Param
	for l, ly := range m.layers {
		ps = append(ps, ly.params()...)
		if l < len(m.norms) && m.norms[l] != nil {
			ps = append(ps, m.norms[l].params()...)
		}
	}
	if m.head != nil {
		ps = append(ps, m.head.params()...)
	}
	return ps
}

// LayerWeights are model layer l's parameters without its bias (which the
// model applies): the ones the layer's own backward computes gradients for.
func (m *Model) LayerWeights(l int) []*Param {
	ly := m.layers[l]
	var ps []*Param
	for _, p := range ly.params() {
		if p != ly.bias() {
			ps = append(ps, p)
		}
	}
	return ps
}

// Err returns the first usage error met by Forward, Loss or Backward (a
// batch that does not match the reserved envelope, a call out of order).
// After an error those methods issue no ops.
func (m *Model) Err() error { return m.err }

func (m *Model) fail(err error) {
	if m.err == nil {
		m.err = err
	}
}

// Reserve allocates activation and gradient workspaces for the envelope caps
// (one per block, bottom first). It may be called again to change the
// envelope; the old workspaces are freed (buffers returned earlier by
// Forward and Loss become invalid).
func (m *Model) Reserve(caps []Caps) error {
	if m.hetero != nil {
		return fmt.Errorf("nn: Reserve: a typed model (%s) reserves per type and relation: ReserveTyped", m.cfg.Kind)
	}
	L := m.cfg.Layers
	if len(caps) != L {
		return fmt.Errorf("nn: Reserve: %d caps for %d layers", len(caps), L)
	}
	for l, c := range caps {
		if err := c.validate(l); err != nil {
			return err
		}
		if l > 0 && c.Src > caps[l-1].Dst {
			return fmt.Errorf("nn: Reserve: block %d has source capacity %d above the destination capacity %d of block %d",
				l, c.Src, caps[l-1].Dst, l-1)
		}
	}
	m.releaseWorkspaces()
	if err := m.reserve(caps); err != nil {
		m.releaseWorkspaces()
		return err
	}
	m.caps = append([]Caps(nil), caps...)
	return nil
}

func (m *Model) reserve(caps []Caps) error {
	L := m.cfg.Layers
	m.act = make([]backend.Buffer, L)
	m.hid = make([]backend.Buffer, L)
	m.dAct = make([]backend.Buffer, L)
	m.mask = make([]backend.Buffer, L)
	m.xView = make([]backend.Buffer, L)
	m.dxView = make([]backend.Buffer, L)
	for l, c := range caps {
		_, out := m.cfg.dims(l)
		actType := backend.F32
		if l == 0 && m.cfg.bf16BottomOutput() {
			actType = backend.BF16 // the bfloat16 product's output, held so through bias/ReLU/dropout
		}
		m.act[l] = m.ws.allocRows(fmt.Sprintf("layer %d activations", l), actType, c.Dst*out)
		m.hid[l] = m.act[l]
		switch {
		case readsHalf(m.next(l)) && m.cfg.BF16Activations && actType == backend.F32:
			m.hid[l] = m.ws.allocRows(fmt.Sprintf("layer %d activations (bfloat16)", l), backend.BF16, c.Dst*out)
		case m.norms[l] != nil && actType == backend.F32:
			// The normalisation writes here and keeps act, its input, for
			// its backward (normLayer.reserve without keep).
			m.hid[l] = m.ws.allocRows(fmt.Sprintf("layer %d normalised activations", l), backend.F32, c.Dst*out)
		}
		if !(l == 0 && m.cfg.bf16Bottom() && m.gathers(1)) { // else layer 1 writes dHalf directly
			m.dAct[l] = m.ws.allocRows(fmt.Sprintf("layer %d activation gradients", l), backend.F32, c.Dst*out)
		}
		if m.cfg.hiddenOut(l) && m.cfg.Dropout > 0 {
			m.mask[l] = m.ws.alloc(fmt.Sprintf("layer %d dropout mask", l), backend.U8, c.Dst*out)
		}
	}
	if m.cfg.bf16Bottom() {
		_, out := m.cfg.dims(0)
		m.dHalf = m.ws.allocRows("layer 0 activation gradients (bfloat16)", backend.BF16, caps[0].Dst*out)
	}
	if m.cfg.InputDropout > 0 {
		m.xDrop = m.ws.alloc("input dropout", backend.F32, caps[0].Src*m.cfg.InDim)
		m.xMask = m.ws.alloc("input dropout mask", backend.U8, caps[0].Src*m.cfg.InDim)
	}
	for l, n := range m.norms {
		if n != nil {
			// In place (and so keeping a copy) unless the step's
			// normalisation writes hid, F32 and its own (Forward).
			inPlace := m.act[l].DType() != backend.F32 || m.hid[l].DType() != backend.F32 || m.hid[l] == m.act[l]
			n.reserve(&m.ws, fmt.Sprintf("layer %d normalisation", l), caps[l].Dst, inPlace)
		}
	}
	if m.head != nil {
		m.head.reserve(&m.ws, caps[L-1].Dst, m.cfg.Classes)
	}
	m.loss = m.ws.alloc("loss", backend.F32, 1)
	m.correct = m.ws.alloc("correct count", backend.I32, 1)
	if m.ws.err != nil {
		return m.ws.err
	}
	for l := 1; l < L; l++ {
		in, _ := m.cfg.dims(l)
		m.xView[l] = rows(m.be, m.hid[l-1], caps[l].Src, in)
		if m.dAct[l-1] != nil {
			m.dxView[l] = rows(m.be, m.dAct[l-1], caps[l].Src, in)
		}
	}
	for l, ly := range m.layers {
		if err := ly.reserve(caps[l]); err != nil {
			return err
		}
	}
	return nil
}

func (m *Model) releaseWorkspaces() {
	for _, ly := range m.layers {
		ly.release()
	}
	m.ws.release()
	m.caps, m.act, m.hid, m.dAct, m.mask, m.xView, m.dxView = nil, nil, nil, nil, nil, nil, nil
	m.loss, m.correct, m.xDrop, m.xMask, m.dHalf = nil, nil, nil, nil, nil
	m.haveLoss = false
}

// Free releases parameters and workspaces. The model must not be used after.
func (m *Model) Free() {
	m.releaseWorkspaces()
	if m.hetero != nil {
		m.hetero.ws.release()
	}
	for _, p := range m.Params() {
		p.free(m.be)
	}
	if m.params != nil {
		m.params.free()
		m.params = nil
	}
	m.layers, m.norms, m.head = nil, nil, nil
}

package train

import (
	"fmt"
	"github.com/fanout-gnn/fanout/featstore"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/nn"
)

// InferOptions sizes the chunks of layer-wise inference.
type InferOptions struct {
	// Chunk is the number of destination vertices per chunk; 0 means
	// Config.Batch.
	Chunk int
	// Edges is the edge capacity of a chunk (a chunk is cut early so that
	// the degrees of its vertices fit); 0 means the larger of the largest
	// degree and Chunk × 2 × the mean degree. It must be at least the
	// largest degree.
	Edges int
	// Layers is how many layers to run from the bottom; 0 means all (the
	// logits). Layers-1 of them give the last hidden layer's output (after
	// its ReLU): the vertices' embeddings.
	Layers int
}

// InferAll computes the logits of every vertex by layer-wise, full-neighbour
// inference with the default chunks. See InferAllWith.
func (t *Trainer) InferAll() (backend.Buffer, error) {
	return t.InferAllWith(InferOptions{})
}

// InferAllWith computes the logits of every vertex exactly (all neighbours,
// no dropout), one layer at a time: for each layer the vertices are split
// into contiguous chunks, each chunk's block is sampled with fanout -1 and
// relabelled, and the layer reads the previous layer's table (the features
// for the bottom layer) and writes its rows of the next table. Only two
// tables are alive at once (F32 [N, in_l] and [N, out_l]). The result is
// F32 [N, Classes], row v = vertex v, owned by the caller (Free it on the
// backend).
func (t *Trainer) InferAllWith(o InferOptions) (backend.Buffer, error) {
	return inferAll(inferSource{be: t.be, g: t.ds.Graph, model: t.model, in: t.in, chunk: t.cfg.Batch, sync: t.sync}, o)
}

// InferModel is InferAllWith for any model over inputs in on be (chunks of
// chunk vertices unless o says otherwise): the top layer's output of every
// vertex of g, F32 [N, out], owned by the caller. Link prediction embeds
// every vertex with it.
func InferModel(be backend.Backend, m *nn.Model, in *Inputs, g *graph.CSR, chunk int, o InferOptions) (backend.Buffer, error) {
	return inferAll(inferSource{be: be, g: g, model: m, in: in, chunk: chunk, sync: be.Sync}, o)
}

// inferSource is what layer-wise inference reads: the backend, the graph,
// the model, its inputs, the default chunk and how to wait for the device.
type inferSource struct {
	be    backend.Backend
	g     *graph.CSR
	model *nn.Model
	in    *Inputs
	chunk int
	sync  func() error
}

func inferAll(src inferSource, o InferOptions) (backend.Buffer, error) {
	ip, err := newInferPlan(src, o)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	defer ip.free()
	return ip.run()
}

// inferPlan is the buffers and chunk boundaries of one layer-wise inference.
type inferPlan struct {
	t      inferSource
	opt    InferOptions
	bounds []int64 // chunk c is vertices [bounds[c], bounds[c+1])
	inf    *nn.Inference
	caps   nn.Caps
	blk    backend.Block  // counts and arrays; NumDst is set per chunk
	iota   backend.Buffer // I32 [N]: iota[v] = v, viewed as each chunk's destinations
	sizes  backend.Buffer // I32 [chunks]: live destinations of each chunk
	clock  backend.Buffer // I32 [2]: zero (sampling all neighbours draws nothing)
	owned  []backend.Buffer
}

func newInferPlan(t inferSource, o InferOptions) (*inferPlan, error) {
	g := t.g
	chunk := o.Chunk
	if chunk == 0 {
		chunk = t.chunk
	}
	maxDeg := maxDegree(g)
	edges := int64(o.Edges)
	if edges == 0 {
		mean := (g.NumEdges() + g.NumNodes - 1) / max(g.NumNodes, 1)
		edges = max(maxDeg, 2*int64(chunk)*mean, 1)
	}
	switch {
	case chunk < 1:
		return nil, fmt.Errorf("chunk %d: want at least 1", chunk)
	case edges < maxDeg:
		return nil, fmt.Errorf("edge capacity %d is below the largest degree %d", edges, maxDeg)
	case edges >= 1<<31:
		return nil, fmt.Errorf("edge capacity %d does not fit int32 counts", edges)
	}
	chunk = int(min(int64(chunk), max(g.NumNodes, 1)))
	ip := &inferPlan{t: t, opt: o, bounds: chunkBounds(g, chunk, edges)}
	ip.caps = nn.Caps{Dst: chunk, Edges: int(edges), Src: int(min(g.NumNodes, int64(chunk)+edges))}
	var err error
	if ip.inf, err = t.model.NewInference(ip.caps); err != nil {
		return nil, err
	}
	if err := ip.alloc(); err != nil {
		ip.free()
		return nil, err
	}
	return ip, nil
}

// alloc makes the plan's backend buffers and writes iota and chunk sizes.
func (ip *inferPlan) alloc() error {
	be, n := ip.t.be, int(ip.t.g.NumNodes)
	var err error
	get := func(dt backend.DType, k int) backend.Buffer {
		if err != nil {
			return nil
		}
		var b backend.Buffer
		if b, err = be.Alloc(dt, max(k, 1)); err == nil {
			ip.owned = append(ip.owned, b)
		}
		return b
	}
	c := ip.caps
	counts := get(backend.I32, 2)
	ip.blk = backend.Block{
		NumEdges: backend.Count{Buf: counts, Off: 0, Cap: c.Edges},
		NumSrc:   backend.Count{Buf: counts, Off: 1, Cap: c.Src},
		Indptr:   get(backend.I32, c.Dst+1),
		Nbrs:     get(backend.I32, c.Edges),
		Indices:  get(backend.I32, c.Edges),
		SrcIDs:   get(backend.I32, c.Src),
	}
	ip.iota = get(backend.I32, n)
	ip.sizes = get(backend.I32, len(ip.bounds)-1)
	ip.clock = get(backend.I32, 2)
	if err != nil {
		return err
	}
	ids := make([]int32, n)
	for v := range ids {
		ids[v] = int32(v)
	}
	be.Write(ip.iota, 0, ids)
	sizes := make([]int32, max(len(ip.bounds)-1, 1))
	for i := range len(ip.bounds) - 1 {
		sizes[i] = int32(ip.bounds[i+1] - ip.bounds[i])
	}
	be.Write(ip.sizes, 0, sizes)
	return nil
}

func (ip *inferPlan) free() {
	if ip.inf != nil {
		ip.inf.Free()
	}
	for _, b := range ip.owned {
		ip.t.be.Free(b)
	}
	ip.owned = nil
}

// run computes every layer and returns the top table (the logits).
func (ip *inferPlan) run() (backend.Buffer, error) {
	t := ip.t
	be, n := t.be, int(t.g.NumNodes)
	mc := t.model.Config()
	tab, ok := t.in.Feat.(featstore.Tabled)
	if !ok {
		return nil, fmt.Errorf("layer-wise inference needs the features as one backend table; the %T store has none", t.in.Feat)
	}
	feat := tab.Table()
	prev := feat
	layers := mc.Layers
	if n := ip.opt.Layers; n > 0 && n < layers {
		layers = n
	}
	head := layers == mc.Layers && mc.HeadReads() != nil // jumping knowledge: the head makes the logits
	kept := make([]backend.Buffer, mc.Layers)            // the tables the head reads
	defer func() {
		for _, b := range kept {
			if b != nil {
				be.Free(b)
			}
		}
	}()
	for l := 0; l < layers; l++ {
		_, dim := mc.Dims(l)
		next, err := be.Alloc(backend.F32, n*dim)
		if err == nil {
			err = ip.layer(l, prev, next, dim)
		}
		if err == nil {
			err = t.sync()
		}
		if prev != feat && !slices.Contains(kept, prev) {
			be.Free(prev)
		}
		if err != nil {
			if next != nil {
				be.Free(next)
			}
			return nil, fmt.Errorf("infer layer %d: %w", l, err)
		}
		if head && slices.Contains(mc.HeadReads(), l) {
			kept[l] = next
		}
		prev = next
	}
	if !head {
		return prev, nil
	}
	logits, err := be.Alloc(backend.F32, n*mc.Classes)
	if err == nil {
		if err = ip.inf.Head(kept, n, logits); err != nil {
			be.Free(logits)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("infer: jumping knowledge's head: %w", err)
	}
	return logits, nil
}

// layer issues model layer l for every chunk: table prev [N, in_l] to next
// [N, dim].
func (ip *inferPlan) layer(l int, prev, next backend.Buffer, dim int) error {
	t := ip.t
	be := t.be
	r := backend.Rand{Clock: ip.clock}
	for c := range len(ip.bounds) - 1 {
		lo, k := int(ip.bounds[c]), int(ip.bounds[c+1]-ip.bounds[c])
		blk := ip.blk
		blk.NumDst = backend.Count{Buf: ip.sizes, Off: c, Cap: k}
		be.SampleLayer(t.in.Graph, be.View(ip.iota, lo, k), blk.NumDst, -1, r, &blk)
		be.Relabel(t.in.Graph, &blk)
		if err := ip.inf.Layer(l, &blk, prev, t.in.Degree, be.View(next, lo*dim, k*dim)); err != nil {
			return err
		}
	}
	return nil
}

// chunkBounds splits [0, N) into contiguous chunks of at most chunk vertices
// whose degrees sum to at most edges (every degree must be <= edges).
func chunkBounds(g *graph.CSR, chunk int, edges int64) []int64 {
	b := []int64{0}
	lo := int64(0)
	for lo < g.NumNodes {
		hi := lo
		for hi < g.NumNodes && hi-lo < int64(chunk) && g.Indptr[hi+1]-g.Indptr[lo] <= edges {
			hi++
		}
		b = append(b, hi)
		lo = hi
	}
	return b
}

// maxDegree is the largest row length of g.
func maxDegree(g *graph.CSR) int64 {
	var m int64
	for v := int64(0); v < g.NumNodes; v++ {
		m = max(m, g.Degree(v))
	}
	return m
}

// fullLogits caches the logits of layer-wise inference with the parameters
// they were computed from, so that evaluating several splits (validation,
// test, predictions) after one epoch infers once.
type fullLogits struct {
	logits backend.Buffer // F32 [N, Classes]
	params []float32      // every parameter's weights, concatenated
}

// paramSnapshot copies every parameter's weights to the host.
func (t *Trainer) paramSnapshot() ([]float32, error) {
	var all []float32
	for _, p := range t.model.Params() {
		w := make([]float32, p.W.Len())
		t.be.Read(w, p.W, 0)
		all = append(all, w...)
	}
	return all, t.sync()
}

// inferredLogits returns the logits of every vertex for the current
// parameters, inferring them unless the cache holds them. The trainer owns
// the buffer.
func (t *Trainer) inferredLogits() (backend.Buffer, error) {
	ps, err := t.paramSnapshot()
	if err != nil {
		return nil, err
	}
	if t.full != nil && slices.Equal(ps, t.full.params) {
		return t.full.logits, nil
	}
	t.dropFullLogits() // free the old table before inferring a new one
	logits, err := t.InferAll()
	if err != nil {
		return nil, err
	}
	t.full = &fullLogits{logits: logits, params: ps}
	return logits, nil
}

// dropFullLogits frees the cached logits.
func (t *Trainer) dropFullLogits() {
	if t.full != nil {
		t.be.Free(t.full.logits)
		t.full = nil
	}
}

// evalRows is scratch for reading rows of the full logits: a batch of ids,
// their logits and labels, and the loss of SoftmaxCrossEntropy.
type evalRows struct {
	be                backend.Backend
	batch, classes    int
	ids, labels, pred backend.Buffer // I32 [batch]
	rows, dl          backend.Buffer // F32 [batch, classes]
	loss              backend.Buffer // F32 [1]
	counts            backend.Buffer // I32 [2]: live ids, correct
	n, correct        backend.Count
}

func (t *Trainer) newEvalRows() (*evalRows, error) {
	e := &evalRows{be: t.be, batch: t.cfg.Batch, classes: t.ds.NumClasses}
	for _, a := range []struct {
		dst *backend.Buffer
		dt  backend.DType
		n   int
	}{{&e.ids, backend.I32, e.batch}, {&e.labels, backend.I32, e.batch}, {&e.pred, backend.I32, e.batch},
		{&e.rows, backend.F32, e.batch * e.classes}, {&e.dl, backend.F32, e.batch * e.classes},
		{&e.loss, backend.F32, 1}, {&e.counts, backend.I32, 2}} {
		b, err := t.be.Alloc(a.dt, a.n)
		if err != nil {
			e.free()
			return nil, err
		}
		*a.dst = b
	}
	e.n = backend.Count{Buf: e.counts, Off: 0, Cap: e.batch}
	e.correct = backend.Count{Buf: e.counts, Off: 1, Cap: e.batch}
	return e, nil
}

func (e *evalRows) free() {
	for _, b := range []backend.Buffer{e.ids, e.labels, e.pred, e.rows, e.dl, e.loss, e.counts} {
		if b != nil {
			e.be.Free(b)
		}
	}
}

// load writes one batch of ids (at most e.batch) and gathers their logits.
func (e *evalRows) load(ids []int64, logits backend.Buffer) {
	seeds := make([]int32, len(ids))
	for i, v := range ids {
		seeds[i] = int32(v)
	}
	e.be.Write(e.ids, 0, seeds)
	e.be.Write(e.counts, e.n.Off, []int32{int32(len(ids))})
	e.be.Gather(logits, e.classes, e.ids, e.n, e.rows)
}

// evaluateFull is Evaluate on the logits of layer-wise inference.
func (t *Trainer) evaluateFull(ids []int64) (acc, loss float64, err error) {
	logits, err := t.inferredLogits()
	if err != nil {
		return 0, 0, err
	}
	e, err := t.newEvalRows()
	if err != nil {
		return 0, 0, err
	}
	defer e.free()
	host := make([]float32, 1)
	cnt := make([]int32, 1)
	var correct int64
	var lossSum float64
	for s := 0; s*e.batch < len(ids); s++ {
		part := ids[s*e.batch : min(len(ids), (s+1)*e.batch)]
		e.load(part, logits)
		t.be.Gather(t.in.Labels, 1, e.ids, e.n, e.labels)
		t.be.SoftmaxCrossEntropy(e.rows, e.labels, e.n, backend.Count{}, e.classes, e.loss, e.dl, e.correct)
		t.be.Read(host, e.loss, 0)
		t.be.Read(cnt, e.counts, e.correct.Off)
		if err := t.sync(); err != nil {
			return 0, 0, fmt.Errorf("evaluate batch %d: %w", s, err)
		}
		correct += int64(cnt[0])
		lossSum += float64(host[0])
	}
	batches := (len(ids) + e.batch - 1) / e.batch
	return float64(correct) / float64(len(ids)), lossSum / float64(batches), nil
}

// predictFull is Predict on the logits of layer-wise inference.
func (t *Trainer) predictFull(ids []int64) ([]int32, error) {
	logits, err := t.inferredLogits()
	if err != nil {
		return nil, err
	}
	e, err := t.newEvalRows()
	if err != nil {
		return nil, err
	}
	defer e.free()
	out := make([]int32, len(ids))
	for s := 0; s*e.batch < len(ids); s++ {
		lo, hi := s*e.batch, min(len(ids), (s+1)*e.batch)
		e.load(ids[lo:hi], logits)
		t.be.Argmax(e.rows, e.n, e.classes, e.pred)
		t.be.Read(out[lo:hi], e.pred, 0)
		if err := t.sync(); err != nil {
			return nil, fmt.Errorf("predict batch %d: %w", s, err)
		}
	}
	return out, nil
}

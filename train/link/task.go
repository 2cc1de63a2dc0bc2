// Package link is link prediction, a task of the one trainer (train.Task):
// a step's items are positive training edges, for which the step draws
// negatives on the backend from the run's Philox keys; the ends of every
// pair are the step's seeds (made distinct), whose neighbourhoods the
// trainer samples (the batch's own edges taken out where asked: Hop), and
// whose embeddings any of nn's models computes; a dot or MLP decoder
// scores the pairs, and their binary cross-entropy is the loss. Every op
// reads the step's sizes from backend memory, so the eager and the replay
// drivers, and every mode around them, run it as they run node
// classification. An evaluation embeds every vertex into backend memory
// and ranks the held-out edges against their negatives there, reading
// back only scores and counts: ROC-AUC, average precision, MRR and
// Hits@K.
package link

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
)

// Philox streams of the link step (the node path's are below 128 and from
// 127 up to 250, and 255).
const negativeStream = 251

// Task is link prediction over the dataset's link task (dataset.Link), with
// the settings of the run's train.Config.Link.
type Task struct{}

// Name is train.TaskLink.
func (Task) Name() string { return train.TaskLink }

// Bind makes t's link prediction: the training edges and, for negatives
// drawn by degree, the cumulative degrees on t's backend, the decoder, and
// the step's pair buffers.
func (Task) Bind(t *train.Trainer) (_ train.Head, err error) {
	ds, cfg := t.Dataset(), t.Config()
	if ds.Link == nil {
		return nil, fmt.Errorf("%s has no link task: import or generate it with --link-split", ds.Name)
	}
	be := t.Backend()
	lk, err := backend.LinkOf(be)
	if err != nil {
		return nil, err
	}
	h := &head{t: t, be: be, lk: lk, ds: ds, cfg: cfg.Link, seed: cfg.Seed, k: cfg.Link.Negatives,
		layout: layoutOf(cfg.Link), dim: cfg.Link.EmbedWidth(cfg.Hidden), batch: t.StepItems(), evalChunk: evalChunkBytes}
	defer func() {
		if err != nil {
			h.Free()
		}
	}()
	if err := h.checkNegatives(); err != nil {
		return nil, err
	}
	if err := h.checkEvalSize(); err != nil {
		return nil, err
	}
	if h.pairs, err = h.upload(ds.Link.Train); err != nil {
		return nil, err
	}
	if cfg.Link.NegativeDist == train.DistDegree {
		if h.dist, err = h.upload(cumulativeDegrees(ds)); err != nil {
			return nil, err
		}
	}
	pairCap := h.batch * (1 + h.k)
	if h.dec, err = newDecoder(be, cfg.Link.Decoder, h.dim, cfg.Link.MLPWidth(h.dim), pairCap, cfg.Seed); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		dst *backend.Buffer
		n   int
	}{{&h.prod, pairCap * h.dim}, {&h.dprod, pairCap * h.dim}, {&h.scores, pairCap}, {&h.dscores, pairCap}, {&h.loss, 1}} {
		if *a.dst, err = h.alloc(backend.F32, a.n); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// head is one trainer's link prediction: its training edges, the decoder
// and the buffers of a step's pairs, which every plan's step shares (only
// the step's loss and backward pass touch them).
type head struct {
	t      *train.Trainer
	be     backend.Backend
	lk     backend.Link
	ds     *dataset.Dataset
	cfg    train.LinkConfig
	seed   uint64
	k      int // negatives per positive
	layout int // where a step's negatives lie (backend.NegOwn, NegShared, NegInBatch)
	dim    int // embedding width
	// batch is the positive edges of one step on this rank.
	batch int

	pairs           backend.Buffer // I32 [training edges, 2]
	dist            backend.Buffer // I32 [N+1] cumulative degrees; nil for uniform negatives
	dec             *decoder
	prod, dprod     backend.Buffer // F32 [pairs cap, dim]: the pairs' products and their gradient
	scores, dscores backend.Buffer // F32 [pairs cap]
	loss            backend.Buffer // F32 [1]
	owned           []backend.Buffer

	sets      [2]*heldOut // the held-out sets as evaluated (evalneg.go)
	evalChunk int         // bytes of one chunk's products in an evaluation (evaldev.go)
}

func (h *head) OutDim() int             { return h.dim }
func (h *head) Items() []int64          { return nil }
func (h *head) ItemCount() int          { return dataset.Pairs(h.ds.Link.Train) }
func (h *head) Outcomes(items int) int  { return items * (1 + h.k) }
func (h *head) UninformedLoss() float64 { return math.Ln2 }
func (h *head) Params() []*nn.Param     { return h.dec.params }
func (h *head) Primary() string         { return MetricAUC }

// SeedCap is the distinct ends of a step of items positives: both ends
// and the negatives' own (k each, k shared, or none in batch), at most
// every vertex.
func (h *head) SeedCap(items int) int {
	return int(min(int64(backend.LinkEnds(items, h.k, h.layout)), h.ds.Graph.NumNodes))
}

// layoutOf is where the settings put a step's negatives.
func layoutOf(l train.LinkConfig) int {
	switch {
	case l.NegativeDist == train.DistInBatch:
		return backend.NegInBatch
	case l.NegativeSharing == train.ShareBatch:
		return backend.NegShared
	}
	return backend.NegOwn
}

// checkNegatives refuses negatives that this rank's steps cannot form:
// in batch, more than the other positives of a step; shared, more than
// the graph's vertices.
func (h *head) checkNegatives() error {
	switch n := h.ds.Graph.NumNodes; {
	case h.layout == backend.NegInBatch && h.k > h.batch-1:
		return fmt.Errorf("--negatives %d in-batch negatives, but a step of this device takes %d edges, %d other destinations: give at most %d, or a larger --batch", h.k, h.batch, h.batch-1, max(h.batch-1, 0))
	case h.layout == backend.NegShared && int64(h.k) > n:
		return fmt.Errorf("--negatives %d shared negatives are distinct vertices, but %s has %d", h.k, h.ds.Name, n)
	}
	return nil
}

// Free releases the head's buffers.
func (h *head) Free() {
	for _, b := range h.owned {
		h.be.Free(b)
	}
	h.owned = nil
	if h.dec != nil {
		h.dec.free()
		h.dec = nil
	}
}

func (h *head) alloc(dt backend.DType, n int) (backend.Buffer, error) {
	b, err := h.be.Alloc(dt, max(n, 1))
	if err == nil {
		h.owned = append(h.owned, b)
	}
	return b, err
}

func (h *head) upload(data []int32) (backend.Buffer, error) {
	b, err := h.be.Upload(data)
	if err == nil {
		h.owned = append(h.owned, b)
	}
	return b, err
}

// cumulativeDegrees is EdgeSeeds's dist for negatives drawn by degree.
func cumulativeDegrees(ds *dataset.Dataset) []int32 {
	g := ds.Graph
	dist := make([]int32, g.NumNodes+1)
	for v := int64(0); v < g.NumNodes; v++ {
		dist[v+1] = dist[v] + int32(g.Degree(v))
	}
	return dist
}

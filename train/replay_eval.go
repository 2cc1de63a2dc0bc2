package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// evalGraph is a captured evaluation pass over one split: per launch, the
// next batch of the split's ids is sliced on the device, sampled with the
// evaluation seed, gathered and predicted, and the loss and correct count
// are accumulated.
type evalGraph struct {
	ids   backend.Buffer // I32 [n]
	n     int
	plan  *Plan
	chunk int // the feature chunks' rows
	graph backend.Replay
}

// evaluate runs a captured evaluation of ids. ok is false when the batches
// did not fit the envelope (nothing is reported then; the eager path runs
// and grows the plan, and the next evaluation captures anew).
func (r *replayer) evaluate(ids []int64) (acc, loss float64, ok bool, err error) {
	t := r.t
	g, err := r.evalGraphFor(ids)
	if err != nil {
		return 0, 0, false, err
	}
	p := t.plan
	batches := (len(ids) + p.Batch - 1) / p.Batch
	t.be.Write(p.Clock, 0, []int32{0, 0})
	t.be.Fill(r.flag, 0)
	t.be.Fill(r.evalAcc, 0)
	for b := range batches {
		g.graph.Launch()
		t.progress("evaluate", b+1, batches)
	}
	sums := make([]float32, 2)
	flag := make([]int32, 3)
	t.be.Read(sums, r.evalAcc, 0)
	t.be.Read(flag, r.flag, 0)
	if err := t.sync(); err != nil {
		return 0, 0, false, fmt.Errorf("evaluate: %w", err)
	}
	t.be.Fill(r.flag, 0)
	if flag[0] != 0 {
		return 0, 0, false, nil
	}
	return float64(sums[1]) / float64(len(ids)), float64(sums[0]) / float64(batches), true, nil
}

// evalGraphFor returns the captured evaluation of ids, capturing it when
// the split or the plan is new.
func (r *replayer) evalGraphFor(ids []int64) (*evalGraph, error) {
	t := r.t
	key := len(ids)
	if len(ids) > 0 {
		key ^= int(ids[0]) << 20
	}
	g := r.evals[key]
	if g != nil && g.plan == t.plan && g.chunk == t.chunkRows() {
		return g, nil
	}
	if g == nil {
		host := make([]int32, len(ids))
		for i, v := range ids {
			host[i] = int32(v)
		}
		buf, err := t.be.Alloc(backend.I32, len(ids))
		if err != nil {
			return nil, err
		}
		t.be.Write(buf, 0, host)
		g = &evalGraph{ids: buf, n: len(ids)}
		r.evals[key] = g
	}
	if g.graph != nil {
		g.graph.Close()
		g.graph = nil
	}
	if err := t.sync(); err != nil {
		return nil, err
	}
	if err := r.cap.BeginCapture(); err != nil {
		return nil, err
	}
	r.issueEval(g)
	rep, err := r.cap.EndCapture()
	if err != nil {
		return nil, fmt.Errorf("capture evaluation: %w", err)
	}
	g.graph, g.plan, g.chunk = rep, t.plan, t.chunkRows()
	r.stats.EvalCaps++
	return g, nil
}

// issueEval enqueues one evaluation batch (the body of an evaluation graph).
func (r *replayer) issueEval(g *evalGraph) {
	t, p, be := r.t, r.t.plan, r.t.be
	be.SliceSeeds(g.ids, g.n, p.Batch, p.Clock, p.Seeds, p.NSeeds)
	p.Sample(t.in, t.cfg.Seed^evalSeedMix)
	p.FlagOverflow(r.flag)
	p.Gather(t.in)
	t.flagChunks(p, r.flag)
	loss, correct, _ := p.Predict(t.model, t.in, t.cfg.Seed)
	be.AddCount(p.ClockStep(), 1, nil) // first: Accumulate's launch advances it
	be.Accumulate(loss, correct, r.evalAcc, r.flag)
}

// freeEvals releases the evaluation graphs and their id buffers.
func (r *replayer) freeEvals() {
	for k, g := range r.evals {
		if g.graph != nil {
			g.graph.Close()
		}
		r.t.be.Free(g.ids)
		delete(r.evals, k)
	}
}

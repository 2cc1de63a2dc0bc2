package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/featstore"
)

// The captured step of the replay driver and its lookahead (see replayer):
// the plan's twin, the two graphs, and what each issues.

// pair makes the twin of the trainer's plan, when the plan is not the one
// the twin was made for.
func (r *replayer) pair() error {
	t := r.t
	if r.plans[0] == t.plan && r.plans[1] != nil {
		return nil
	}
	if r.plans[1] != nil {
		r.plans[1].Free()
		r.plans[1] = nil
	}
	twin, err := t.plan.Twin(t.fetchBeside())
	if err != nil {
		return err
	}
	if err := t.attach(twin); err != nil {
		twin.Free()
		return err
	}
	r.plans = [2]*Plan{t.plan, twin}
	return nil
}

// capture records the two steps (graphs[0] and graphs[1]): each checks
// its plan's counts, samples the next step into the other plan beside its
// work, gathers, runs forward, loss, backward and Adam (skipped on
// overflow), accumulates loss and accuracy, and advances its plan's clock.
func (r *replayer) capture() error {
	t := r.t
	r.closeGraphs()
	if err := r.pair(); err != nil {
		return err
	}
	// One eager step sizes any lazily grown scratch before capture; its
	// effects are undone: parameters are not touched (the flag is set) and
	// the clocks and accumulators are reset by the caller.
	t.be.Fill(r.flag, 1)
	t.noReduce = true
	r.setClocks(0, 0)
	r.prepare(r.plans[0])
	r.issue(0)
	t.noReduce = false
	if err := t.sync(); err != nil {
		return err
	}
	if c := t.chunked(); c != nil {
		// Growth looks at the gathers launched after the capture.
		if _, _, err := c.Need(true); err != nil {
			return err
		}
	}
	for k := range r.graphs {
		if err := r.cap.BeginCapture(); err != nil {
			return err
		}
		r.issue(k)
		g, err := r.cap.EndCapture()
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		r.graphs[k] = g
	}
	r.chunk = t.chunkRows()
	r.stats.Captures++
	t.be.Fill(r.flag, 0)
	return t.be.Sync()
}

// setClocks sets the plans' clocks for a run from step s: the first step
// learns from plans[0], the next from plans[1].
func (r *replayer) setClocks(epoch, s int) {
	for k, p := range r.plans {
		r.t.be.Write(p.Clock, 0, []int32{int32(epoch), int32(s + k)})
	}
}

// sample slices the items of p's step from the epoch's permutation, forms
// its seeds and samples its blocks.
func (r *replayer) sample(p *Plan) {
	t, be := r.t, r.t.be
	be.SliceSeeds(r.perm, r.nPerm, t.batch(), p.Clock, p.Items, p.NItems)
	if p.Shared {
		be.SliceSeeds(r.global, t.items(), t.cfg.Batch, p.Clock, r.globalOut, p.Global)
	}
	p.SampleTrain(t.in, t.cfg.Seed)
}

// prepare samples p's step and gathers its labels (each plan has its
// own) and, with fetchBeside, fetches its rows: a run's first step in
// order before its first launch (into plans[0]), then each launch the step
// after its own, beside it, so the label gather is off the step's chain.
func (r *replayer) prepare(p *Plan) {
	r.sample(p)
	if r.t.fetchBeside() {
		p.Gather(r.t.in)
	} else {
		p.GatherLabels(r.t.in)
	}
}

// issue enqueues graphs[k]'s step: learning from plans[k]'s batch, with
// the next step's sampling into plans[1-k] beside it (Plan.Beside), and
// with fetchBeside the next step's rows fetched there too.
func (r *replayer) issue(k int) {
	t, be := r.t, r.t.be
	p, next := r.plans[k], r.plans[1-k]
	fetch := t.fetchBeside()
	p.FlagOverflow(r.flag)
	if fetch {
		// p's rows came in the step before (or first): the store's last
		// gather is p's until this step's fetch starts below.
		t.flagChunks(p, r.flag)
	}
	if r.opt.InOrder {
		defer r.prepare(next)
	} else {
		// Beside the step from the bottom layer's forward pass on, the
		// bottom layer's gathers and aggregation having the memory system
		// to themselves: at small batches the sampling is longer than the
		// backward pass (H100: products-sim's step 11% faster at 16 seeds,
		// 2% at 512, 6% at 1024, 1.5% slower at 2048; papers-sim's 2-5%
		// faster; docs/perf.md). A group whose batch normalisation
		// all-reduces inside the forward pass joins the second queue there
		// (normGroup), so it forks before the backward pass.
		p.Beside = func() { backend.RunBeside(be, func() { r.prepare(next) }) }
		p.BesideLate = t.cfg.SyncNorm && t.group() != nil
		defer func() { p.Beside, p.BesideLate = nil, false }()
		defer backend.JoinBeside(be)
	}
	if !fetch {
		// Rows the twin shares (a resident store's gather), in the step.
		p.GatherRows(t.in)
		t.flagChunks(p, r.flag)
	}
	adam := t.adam
	adam.Skip = r.flag
	loss, correct := p.Learn(t.model, t.in, t.cfg.Seed, adam)
	r.loss = loss
	// The clock first: the CUDA backend's Accumulate launch advances it.
	be.AddCount(p.ClockStep(), 2, nil)
	be.Accumulate(loss, correct, r.acc, r.flag)
}

// fetchBeside says whether the replay driver fetches a step's feature rows
// in the step before it, beside that step's backward pass, into the plan's
// twin: for a store whose gathers wait on transfers the compute can hide
// (featstore.Remote: rows from other ranks). Other stores gather in the
// step itself, into rows the twin shares (a resident gather is short, and
// the rows would double).
// Across ranks the fetch's all-to-alls run on the second stream and the
// gradient all-reduce on the first, through one communicator; the
// all-reduce joins the second stream first (reduceGrads), so every rank
// runs them in one order, the fetch first, and waits for the fetch when
// the fetch is longer than the backward pass.
func (t *Trainer) fetchBeside() bool {
	if t.in == nil {
		return false
	}
	r, ok := t.in.Feat.(featstore.Remote)
	return ok && r.Remote()
}

// closeGraphs releases the captured steps.
func (r *replayer) closeGraphs() {
	for k, g := range r.graphs {
		if g != nil {
			g.Close()
			r.graphs[k] = nil
		}
	}
}

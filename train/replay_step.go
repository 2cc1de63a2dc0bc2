package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/featstore"
)

// The captured step of the replay driver and its lookahead (see replayer):
// the plan's twins, the ring of graphs, and what each issues.

// pair makes the twins of the trainer's plan (plans[1..L]), when the plan
// is not the one they were made for.
func (r *replayer) pair() error {
	t := r.t
	if r.plans[0] == t.plan && r.plans[1] != nil {
		return nil
	}
	r.freeTwins()
	twins := make([]*Plan, 0, len(r.plans)-1)
	for range len(r.plans) - 1 {
		twin, err := t.plan.Twin(t.fetchBeside())
		if err == nil {
			if err = t.attach(twin); err != nil {
				twin.Free()
			}
		}
		if err != nil {
			for _, q := range twins {
				q.Free()
			}
			return err
		}
		twins = append(twins, twin)
	}
	r.plans[0] = t.plan
	copy(r.plans[1:], twins)
	return nil
}

// freeTwins releases the twins of the trainer's plan.
func (r *replayer) freeTwins() {
	for k := 1; k < len(r.plans); k++ {
		if r.plans[k] != nil {
			r.plans[k].Free()
			r.plans[k] = nil
		}
	}
}

// capture records the ring's steps (graphs[0..L]): each checks its plan's
// counts, prepares the step L ahead into the plan the step before learnt
// beside its work, gathers, runs forward, loss, backward and Adam (skipped
// on overflow), accumulates loss and accuracy, and advances its plan's
// clock.
func (r *replayer) capture() error {
	t := r.t
	r.closeGraphs()
	if err := r.pair(); err != nil {
		return err
	}
	// One eager step sizes any lazily grown scratch before capture; its
	// effects are undone: parameters are not touched (the flag is set) and
	// the clocks and accumulators are reset by the caller. It is prepared
	// as a run's first step is (start), and leaves no gather in flight
	// (drain), as a run of one launch.
	t.be.Fill(r.flag, 1)
	t.noReduce = true
	r.setClocks(0, 0)
	r.start()
	r.issue(0)
	r.drain(1)
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

// setClocks sets the plans' clocks for a run from step s: plans[k] holds
// step s+k, so the run's launch j learns step s+j from plans[j%(L+1)].
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

// prepare samples plans[k]'s step and gathers its labels (each plan has
// its own) and, with fetchBeside, fetches its rows into the plan's own: a
// lander's gather is started into its site k and landed later (start,
// issue, drain), and a chunked store's is checked against its chunks into
// the plan's own flag (fetched), which the step that learns the plan
// reads. A run prepares its first L steps in order before its first
// launch (plans[0..L-1]), then each launch the step L after its own,
// beside it, so the label gather is off the step's chain.
func (r *replayer) prepare(k int) {
	t, p := r.t, r.plans[k]
	r.sample(p)
	if t.fetchBeside() {
		if s := t.lander(); s != nil {
			s.AheadSite(k) // started into site k, landed later (land)
			p.GatherRows(t.in)
			s.AheadSite(-1)
		} else {
			p.GatherRows(t.in)
		}
		if r.fetched != nil {
			t.be.Fill(r.fetched[k], 0)
			t.flagChunks(p, r.fetched[k])
		}
	}
	p.GatherLabels(t.in)
}

// issue enqueues graphs[k]'s step: learning from plans[k]'s batch, with
// the step L ahead prepared into plans[(k+L)%(L+1)] beside it
// (Plan.Beside), and with fetchBeside its rows fetched there too. With a
// lander store it then lands plans[(k+1)%(L+1)]'s rows beside it, the
// plan the next launch learns: their gather was issued L-1 launches
// before (by launch j-L+1 for this launch j), or in order at the run's
// start for its first L-1 launches.
func (r *replayer) issue(k int) {
	t, be := r.t, r.t.be
	size := len(r.plans)
	L, p := size-1, r.plans[k]
	ahead := func() {
		r.prepare((k + L) % size)
		r.land((k + 1) % size)
	}
	fetch := t.fetchBeside()
	p.FlagOverflow(r.flag)
	if r.fetched != nil {
		// p's fetch was checked against the chunks when it was issued,
		// into p's own flag: the store's last gather is another step's
		// when L > 1. The check counts at p's step, as its counts do.
		be.FlagOverflow(backend.Count{Buf: r.fetched[k], Cap: 0}, p.Clock, r.flag)
	}
	if r.opt.InOrder {
		defer ahead()
	} else {
		// Beside the step from the bottom layer's forward pass on, the
		// bottom layer's gathers and aggregation having the memory system
		// to themselves: at small batches the sampling is longer than the
		// backward pass (H100: products-sim's step 11% faster at 16 seeds,
		// 2% at 512, 6% at 1024, 1.5% slower at 2048; papers-sim's 2-5%
		// faster; docs/perf.md). A group whose batch normalisation
		// all-reduces inside the forward pass joins the second queue there
		// (normGroup), so it forks before the backward pass.
		p.Beside = func() { backend.RunBeside(be, ahead) }
		p.BesideLate = t.cfg.SyncNorm && t.group() != nil
		defer func() { p.Beside, p.BesideLate = nil, false }()
		defer backend.JoinBeside(be)
	}
	if !fetch {
		// Rows the twins share (a resident store's gather), in the step.
		p.GatherRows(t.in)
		t.flagChunks(p, r.flag)
	}
	adam := t.adam
	adam.Skip = r.flag
	loss, correct := p.Learn(t.model, t.in, t.cfg.Seed, adam)
	r.loss = loss
	// The clock first: the CUDA backend's Accumulate launch advances it.
	be.AddCount(p.ClockStep(), int32(size), nil)
	be.Accumulate(loss, correct, r.acc, r.flag)
}

// fetchBeside says whether the replay driver fetches a step's feature rows
// ahead, beside an earlier step's backward pass, into the plan's own rows
// (each twin has its own): for a store whose gathers wait on transfers the
// compute can hide (featstore.Remote: rows from other ranks). Other stores
// gather in the step itself, into rows the twins share (a resident gather
// is short, and the rows would multiply).
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

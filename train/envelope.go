package train

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/sample"
)

// conservativeCaps is the envelope no batch can exceed: min(N, B·Π fanouts)
// per hop (package sample's Envelope).
func (t *Trainer) conservativeCaps(fanouts []int) []nn.Caps {
	sc := sample.Envelope(t.ds.Graph, t.seedCap(), fanouts)
	caps := make([]nn.Caps, len(sc))
	for i, c := range sc {
		caps[i] = nn.Caps(c)
	}
	return caps
}

// observeSizes samples the first n steps of the first epoch on a
// sampling-only plan at the conservative envelope and returns the largest
// live sizes seen per block (bottom first; a group's largest over its
// ranks). Sampling depends only on the seed and the clock, so the steps
// sampled here are the ones trained later. With a chunked feature store it
// also returns the most rows one of the batches after the first asks of one
// peer (this rank's; the first batch, which no gather precedes, asks for
// every row it does not hold, and only the warm-up's gather, whose results
// are dropped, finds no batch before it).
func (t *Trainer) observeSizes(n int) ([]nn.Caps, int, error) {
	cons := t.conservativeCaps(t.cfg.Fanouts)
	p, err := t.samplingPlan(t.cfg.Fanouts, cons, 0)
	if err != nil {
		return nil, 0, err
	}
	defer p.Free()
	perm, steps := t.epochSeeds(0)
	obs := make([]nn.Caps, len(cons))
	chunks := t.chunked()
	var prev []int32
	need := 0
	for s := 0; s < min(n, steps); s++ {
		counts, err := t.sampleSizes(p, perm, 0, s)
		if err != nil {
			return nil, 0, fmt.Errorf("observe step %d: %w", s, err)
		}
		observe(obs, p, counts)
		if chunks == nil {
			continue
		}
		ids, err := t.batchSources(p, counts)
		if err != nil {
			return nil, 0, fmt.Errorf("observe step %d: %w", s, err)
		}
		if s > 0 || min(n, steps) == 1 {
			need = max(need, chunks.Asks(ids, prev))
		}
		prev = ids
	}
	caps, err := t.maxCaps(obs)
	return caps, need, err
}

// sampleSizes samples step s of epoch (whose seeds, shuffled, are perm) on
// the sampling plan p and returns its live sizes: the host copy of
// p.SizeCounts().
func (t *Trainer) sampleSizes(p *Plan, perm []int32, epoch, s int) ([]int32, error) {
	p.SetItems(t.stepSeeds(perm, s), t.globalLive(s), epoch, s)
	p.FormSeeds()
	p.Sample(t.in, t.cfg.Seed)
	counts := make([]int32, p.SizeCounts().Len())
	t.be.Read(counts, p.SizeCounts(), 0)
	return counts, t.be.Sync()
}

// observe raises obs (bottom first) to the live sizes in counts.
func observe(obs []nn.Caps, p *Plan, counts []int32) {
	for i, b := range p.Blocks {
		obs[i].Dst = max(obs[i].Dst, int(counts[b.NumDst.Off]))
		obs[i].Edges = max(obs[i].Edges, int(counts[b.NumEdges.Off]))
		obs[i].Src = max(obs[i].Src, int(counts[b.NumSrc.Off]))
	}
}

// growPlan raises base (per block, bottom first) to the live sizes in
// counts, read from plan p, tightens the result with the margin, and
// re-provisions the training plan for it. Every capacity only grows:
// tighten multiplies by a margin of at least 1 and clips at the
// conservative bound, which base never exceeds.
func (t *Trainer) growPlan(base []nn.Caps, p *Plan, counts []int32) ([]nn.Caps, error) {
	obs := append([]nn.Caps(nil), base...)
	observe(obs, p, counts)
	caps := tighten(obs, t.conservativeCaps(t.cfg.Fanouts), t.seedCap(), t.margin())
	return caps, t.replan(caps)
}

// tighten turns observed sizes into an envelope: each capacity is the
// observed maximum times margin, at most the conservative bound, chained so
// that each hop's destinations are the previous hop's sources.
func tighten(obs, cons []nn.Caps, batch int, margin float64) []nn.Caps {
	L := len(obs)
	out := make([]nn.Caps, L)
	dst := batch
	grow := func(v, bound int) int { return min(bound, int(math.Ceil(float64(v)*margin))) }
	for h := 0; h < L; h++ {
		i := L - 1 - h
		c := nn.Caps{Dst: dst}
		c.Edges = max(1, grow(obs[i].Edges, cons[i].Edges))
		c.Src = max(dst, grow(obs[i].Src, cons[i].Src))
		out[i] = c
		dst = c.Src
	}
	return out
}

// EnvelopeReport compares the envelope a plan was provisioned for with the
// ideal: the exact sizes of the largest batch observed.
type EnvelopeReport struct {
	Caps       []nn.Caps `json:"caps"`       // bottom first
	Ideal      []nn.Caps `json:"ideal_caps"` // largest observed sizes
	Bytes      int64     `json:"bytes"`      // plan + model workspace at Caps
	IdealBytes int64     `json:"ideal_bytes"`
}

// planBytes is the backend memory of a plan for caps with rows of featDim
// values of rowBytes each, counted as NewPlan allocates it.
func planBytes(caps []nn.Caps, batch, featDim, rowBytes int) int64 {
	n := int64(2*batch+2+2+2*len(caps)) * 4
	for _, c := range caps {
		n += int64(c.Dst+1+2*c.Edges+c.Src) * 4
	}
	if len(caps) > 0 {
		n += int64(caps[0].Src*featDim) * int64(rowBytes)
	}
	return n
}

// envelopeReport measures the step's memory at caps and at the ideal
// (largest observed) sizes. It leaves the model reserved for caps.
func (t *Trainer) envelopeReport(caps, ideal []nn.Caps) (EnvelopeReport, error) {
	r := EnvelopeReport{Caps: caps, Ideal: ideal}
	if err := t.model.Reserve(ideal); err != nil {
		return r, err
	}
	r.IdealBytes = t.replayBytes(ideal)
	if err := t.model.Reserve(caps); err != nil {
		return r, err
	}
	r.Bytes = t.replayBytes(caps)
	return r, nil
}

// replayBytes is the replayed step's memory at caps with the model reserved
// for them: the plan, its twins (one per step of the lookahead: the steps
// ahead's sampling, and their rows with fetchBeside; Plan.Twin) and the
// model's workspace.
func (t *Trainer) replayBytes(caps []nn.Caps) int64 {
	twinDim := 0
	if t.fetchBeside() {
		twinDim = t.ds.FeatDim
	}
	rows := t.rowType().Size()
	twins := int64(max(t.replayAhead, 1))
	return planBytes(caps, t.seedCap(), t.ds.FeatDim, rows) + twins*planBytes(caps, t.seedCap(), twinDim, rows) + t.model.WorkspaceBytes()
}

// envelope provisions the replayed plan: for the envelope opt gives, or
// one tightened over the largest sizes of the first steps; a typed plan
// likewise (typed_tighten.go), or for its conservative envelope, which no
// batch exceeds, with opt.Conservative.
func (r *replayer) envelope(opt ReplayOptions) error {
	t := r.t
	if t.ds.Typed() {
		if opt.Conservative {
			return t.replanTyped()
		}
		return t.replanTypedTight(opt.Observe, opt.Margin)
	}
	ideal := opt.Caps
	caps := opt.Caps
	if caps == nil {
		obs, need, err := t.observeSizes(opt.Observe)
		if err != nil {
			return err
		}
		ideal = obs
		caps = tighten(obs, t.conservativeCaps(t.cfg.Fanouts), t.seedCap(), opt.Margin)
		if err := t.sizeChunks(need, opt.Chunk); err != nil {
			return err
		}
	} else if opt.Chunk > 0 {
		if err := t.sizeChunks(0, opt.Chunk); err != nil {
			return err
		}
	}
	if err := t.replan(caps); err != nil {
		return err
	}
	var err error
	r.stats.Envelope, err = t.envelopeReport(caps, ideal)
	return err
}

// replan replaces the training plan with one for caps and reserves the
// model for it. Evaluation uses the same plan.
func (t *Trainer) replan(caps []nn.Caps) error {
	return t.swapPlan(func() (*Plan, error) {
		p, err := t.reservedPlan(t.cfg.Fanouts, caps)
		if err == nil {
			p.Tight = true
		}
		return p, err
	})
}

// replanTyped replaces the training plan with a typed plan for the
// conservative envelope.
func (t *Trainer) replanTyped() error { return t.swapPlan(t.newTypedPlan) }

// swapPlan frees the training plan and makes its successor, which
// continues its Adam step number; evaluation uses it too.
func (t *Trainer) swapPlan(build func() (*Plan, error)) error {
	if t.eval != nil && t.eval != t.plan {
		t.eval.Free()
	}
	var adamT []int32
	if t.plan != nil {
		adamT = make([]int32, 1)
		t.be.Read(adamT, t.plan.Counts, t.plan.AdamT.Off)
		t.plan.Free()
	}
	t.plan, t.eval = nil, nil
	p, err := build()
	if err != nil {
		return err
	}
	if adamT != nil {
		t.be.Write(p.Counts, p.AdamT.Off, adamT)
	}
	t.plan, t.eval = p, p
	return t.be.Sync()
}

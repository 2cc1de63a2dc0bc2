package train

import (
	"fmt"
	"time"
)

// The replay driver's growth: a step whose live sizes overflow the
// envelope raises it, re-provisions the plan and captures the step again.

// grow raises the envelope to the sizes of step f of epoch (every rank of
// a group to the largest sizes of any) with the margin, re-provisions the
// plan (a one-type run also grows the feature chunks when a gather asked
// more than they hold, growChunks) and re-captures the step.
func (r *replayer) grow(epoch, f int, took *growTimes) error {
	t := r.t
	var err error
	if t.ds.Typed() {
		err = r.growTypedInPlace(epoch, f, took)
	} else {
		err = r.growOneTypeStep(epoch, f, took)
	}
	if err != nil {
		return err
	}
	end := time.Now()
	err = r.capture()
	took.capture = time.Since(end)
	return err
}

// growOneTypeStep samples step f of epoch on a sampling-only plan at the
// conservative envelope (a one-type bound is a few times the step) and
// grows the training plan to its sizes.
func (r *replayer) growOneTypeStep(epoch, f int, took *growTimes) error {
	t := r.t
	start := time.Now()
	p, err := t.conservativeSampler()
	if err != nil {
		return err
	}
	defer p.Free()
	counts, err := r.stepSizes(p, epoch, f)
	if err != nil {
		return err
	}
	mid := time.Now()
	took.sample = mid.Sub(start)
	err = r.growOneType(p, counts)
	took.provision = time.Since(mid)
	return err
}

// growTypedInPlace samples step f of epoch on the training plan itself,
// whose sampler clips what overflows and counts it, grows the plan to
// those sizes and samples again until nothing overflows. A typed
// conservative envelope multiplies the fanouts over every relation of
// every hop (about 11 GB at igbh-sim's MLPerf settings, nearly the step
// again), so a plan at it would double the memory a growth holds, past a
// hybrid budget.
func (r *replayer) growTypedInPlace(epoch, f int, took *growTimes) error {
	t := r.t
	var mid time.Time
	sample := func() (*Plan, []int32, error) {
		start := time.Now()
		p := t.plan
		counts, err := r.stepSizes(p, epoch, f)
		mid = time.Now()
		took.sample += mid.Sub(start)
		return p, counts, err
	}
	_, err := untilFits(fmt.Sprintf("step %d of epoch %d", f+1, epoch+1), sample, func(p *Plan, counts []int32) error {
		err := t.growTyped(p.Typed.Caps, p, counts)
		took.provision += time.Since(mid)
		return err
	})
	return err
}

// stepSizes samples step f of epoch on p and returns its live sizes, a
// group's largest (a group grows together).
func (r *replayer) stepSizes(p *Plan, epoch, f int) ([]int32, error) {
	perm, _ := r.t.epochSeeds(epoch)
	counts, err := r.t.sampleSizes(p, perm, epoch, f)
	if err != nil {
		return nil, err
	}
	return r.t.maxHost(counts)
}

// conservativeSampler is a sampling-only plan at the conservative
// envelope, typed or not as the run is.
func (t *Trainer) conservativeSampler() (*Plan, error) {
	if !t.ds.Typed() {
		return t.samplingPlan(t.cfg.Fanouts, t.conservativeCaps(t.cfg.Fanouts), 0)
	}
	cons, fanouts, err := t.typedCaps()
	if err != nil {
		return nil, err
	}
	return t.typedPlanFor(cons, fanouts, false)
}

// growOneType raises the one-type envelope to the sizes counts (sampled by
// p, a group's largest), re-provisions the plan and grows the feature
// chunks where a gather asked more than they hold.
func (r *replayer) growOneType(p *Plan, counts []int32) error {
	t := r.t
	observe(r.stats.Envelope.Ideal, p, counts)
	caps, err := t.growPlan(t.plan.Caps, p, counts)
	if err != nil {
		return err
	}
	if r.stats.Envelope, err = t.envelopeReport(caps, r.stats.Envelope.Ideal); err != nil {
		return err
	}
	_, err = t.growChunks(false)
	return err
}

// growTimes is where the time of a growth went: sampling the overflowed
// step at the conservative envelope, provisioning the plan and the model
// for the grown one, and capturing the step again.
type growTimes struct{ sample, provision, capture time.Duration }

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return 1e3 * d.Seconds() }

package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// evalSeedMix keys evaluation sampling apart from training, and the same for
// every evaluation, so that validation figures are comparable across epochs.
const evalSeedMix = 0x5eed_e7a1_0000_0001

// Evaluate returns the accuracy and the loss (the mean of the batches' mean
// losses) over ids (vertex ids), without dropout: sampled with the training fanouts, or, with Config.FullEval, from
// the logits of layer-wise full-neighbour inference (InferAll; computed once
// for the current parameters and reused across splits). Unlabelled vertices
// count against accuracy as they would in any split; splits hold labelled
// vertices only.
func (t *Trainer) Evaluate(ids []int64) (acc, loss float64, err error) {
	if len(ids) == 0 {
		return 0, 0, nil
	}
	if t.cfg.FullEval {
		return t.evaluateFull(ids)
	}
	// A group's rank evaluates eagerly, in shares of Config.Batch keyed as
	// one device's batches (sampleEval); the captured evaluation slices
	// its own batches.
	if t.rep != nil && t.opt.Parallel == nil {
		if acc, loss, ok, err := t.rep.evaluate(ids); ok || err != nil {
			return acc, loss, err
		}
	}
	p := t.eval
	seeds := make([]int32, 0, p.Batch)
	host := make([]float32, 1)
	cnt := make([]int32, 1)
	var correct int64
	var lossSum float64
	for s := 0; s*p.Batch < len(ids); s++ {
		seeds = batchIDs(seeds, ids, s, p.Batch)
		if err := t.sampleEval(seeds, s); err != nil {
			return 0, 0, err
		}
		p = t.eval
		p.Gather(t.in)
		if err := t.gatherFits(p); err != nil {
			return 0, 0, err
		}
		l, c, _ := p.Predict(t.model, t.in, t.cfg.Seed)
		t.be.Read(host, l, 0)
		t.be.Read(cnt, c.Buf, c.Off)
		if err := t.sync(); err != nil {
			return 0, 0, fmt.Errorf("evaluate step %d: %w", s, err)
		}
		correct += int64(cnt[0])
		lossSum += float64(host[0])
		t.progress("evaluate", s+1, (len(ids)+p.Batch-1)/p.Batch)
	}
	batches := (len(ids) + p.Batch - 1) / p.Batch
	return float64(correct) / float64(len(ids)), lossSum / float64(batches), nil
}

// Predict returns the predicted class of every vertex in ids (from
// layer-wise inference with Config.FullEval, as Evaluate).
func (t *Trainer) Predict(ids []int64) ([]int32, error) {
	if t.cfg.FullEval {
		return t.predictFull(ids)
	}
	p := t.eval
	out := make([]int32, len(ids))
	seeds := make([]int32, 0, p.Batch)
	var pred backend.Buffer
	var err error
	if pred, err = t.be.Alloc(backend.I32, p.Batch); err != nil {
		return nil, err
	}
	defer t.be.Free(pred)
	classes := t.ds.NumClasses
	for s := 0; s*p.Batch < len(ids); s++ {
		seeds = batchIDs(seeds, ids, s, p.Batch)
		if err := t.sampleEval(seeds, s); err != nil {
			return nil, err
		}
		p = t.eval
		p.Gather(t.in)
		if err := t.gatherFits(p); err != nil {
			return nil, err
		}
		_, _, logits := p.Predict(t.model, t.in, t.cfg.Seed)
		t.be.Argmax(logits, p.NSeeds, classes, pred)
		t.be.Read(out[s*p.Batch:s*p.Batch+len(seeds)], pred, 0)
		if err := t.sync(); err != nil {
			return nil, fmt.Errorf("predict step %d: %w", s, err)
		}
	}
	return out, nil
}

// sampleEval issues the sampling of evaluation batch s. In a tight envelope
// (Plan.Tight: the replay driver's plan, which evaluation shares) it reads the counts
// back and grows the plan until the batch fits; the replay driver
// re-captures its step when it sees the new plan.
func (t *Trainer) sampleEval(seeds []int32, s int) error {
	// Sampling is keyed by the batch of Config.Batch seeds a vertex falls
	// in, so a rank evaluating in shares of that batch samples what one
	// device samples.
	key := s * t.eval.Batch / t.cfg.Batch
	sample := func() (*Plan, []int32, error) {
		p := t.eval
		p.SetBatch(seeds, 0, key)
		p.Sample(t.in, t.cfg.Seed^evalSeedMix)
		if !p.Tight {
			return p, nil, nil
		}
		counts := make([]int32, p.SizeCounts().Len())
		t.be.Read(counts, p.SizeCounts(), 0)
		if err := t.sync(); err != nil {
			return nil, nil, fmt.Errorf("evaluate step %d: %w", s, err)
		}
		// A group grows together (maxHost), so its plans stay equal.
		counts, err := t.maxHost(counts)
		return p, counts, err
	}
	_, err := untilFits(fmt.Sprintf("evaluate step %d", s), sample, t.growEval)
	return err
}

// growEval raises the evaluation's plan p (the replay driver's, shared)
// to the sizes counts that overflowed it.
func (t *Trainer) growEval(p *Plan, counts []int32) error {
	if p.Typed != nil {
		return t.growTyped(p.Typed.Caps, p, counts)
	}
	caps, err := t.growPlan(p.Caps, p, counts)
	if err != nil {
		return err
	}
	if t.rep != nil {
		env := &t.rep.stats.Envelope
		env.Caps = caps
		env.Bytes = t.replayBytes(caps)
	}
	return nil
}

// batchIDs fills seeds (reused) with batch s of ids, as int32.
func batchIDs(seeds []int32, ids []int64, s, batch int) []int32 {
	seeds = seeds[:0]
	for _, v := range ids[s*batch : min(len(ids), (s+1)*batch)] {
		seeds = append(seeds, int32(v))
	}
	return seeds
}

// rangeIDs is batch s of the ids 0..n-1 in batches of batch, in seeds
// (reused).
func rangeIDs(seeds []int32, n, s, batch int) []int32 {
	seeds = seeds[:0]
	for v := s * batch; v < min(n, (s+1)*batch); v++ {
		seeds = append(seeds, int32(v))
	}
	return seeds
}

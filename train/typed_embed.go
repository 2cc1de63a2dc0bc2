package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// TypedEmbeddings computes the output of the last hidden layer (layer
// Layers-2) of every vertex of type ty (index into the dataset's types):
// flat [Count, Hidden] float32, row v for vertex v, without dropout,
// sampled with the training fanouts and the evaluation key, in batches
// seeded by ty's own vertices (its rows at every layer are the first). The
// model's workspaces are reserved for those batches meanwhile and for the
// training plan again after. A type no relation reaches has no such rows:
// an error naming it.
func (t *Trainer) TypedEmbeddings(ty int) (_ []float32, _ int, err error) {
	ds, cfg := t.ds, t.cfg
	switch {
	case !ds.Typed() || t.plan == nil || t.plan.Typed == nil:
		return nil, 0, fmt.Errorf("embeddings per type: %s is not a typed run", ds.Name)
	case ty < 0 || ty >= len(ds.Types):
		return nil, 0, fmt.Errorf("embeddings per type: type %d of %d", ty, len(ds.Types))
	case cfg.Layers < 2:
		return nil, 0, fmt.Errorf("embeddings: a one-layer model has no hidden layer")
	case len(t.model.Config().RelsInto(ty)) == 0:
		return nil, 0, fmt.Errorf("embeddings: no relation reaches type %s, so it has no hidden rows", ds.Types[ty].Name)
	}
	fanouts, err := cfg.TypedFanouts(ds)
	if err != nil {
		return nil, 0, err
	}
	n, dim := int(ds.Types[ty].Count), cfg.Hidden
	batch := min(cfg.Batch, n)
	caps := typedEnvelope(ds, batch, fanouts, ty)
	p, err := NewPlan(t.be, batch, nil, nil, 0, backend.F32)
	if err != nil {
		return nil, 0, err
	}
	defer p.Free()
	if p.Typed, err = t.typedHops(p, caps, fanouts, ty, false); err != nil {
		return nil, 0, err
	}
	if err := t.model.ReserveTyped(caps); err != nil {
		return nil, 0, err
	}
	defer func() {
		if rerr := t.model.ReserveTyped(t.plan.Typed.Caps); err == nil {
			err = rerr
		}
	}()
	out := make([]float32, n*dim)
	seeds := make([]int32, 0, batch)
	for s := 0; s*batch < n; s++ {
		seeds = rangeIDs(seeds, n, s, batch)
		p.SetBatch(seeds, 0, s)
		p.Sample(t.in, cfg.Seed^evalSeedMix)
		p.GatherRows(t.in)
		t.model.Forward(p.NNBatch(t.in), false, backend.Rand{Seed: cfg.Seed, Clock: p.Clock})
		t.be.Read(out[s*batch*dim:(s*batch+len(seeds))*dim], t.model.TypedOutput(cfg.Layers-2, ty), 0)
		if err := t.sync(); err != nil {
			return nil, 0, fmt.Errorf("embeddings of %s, batch %d: %w", ds.Types[ty].Name, s, err)
		}
		t.progress("embeddings "+ds.Types[ty].Name, s+1, (n+batch-1)/batch)
	}
	t.progress("", 0, 0)
	return out, dim, nil
}

package train

import (
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"

	"github.com/fanout-gnn/fanout/nn"
)

// typedRefuses names the options a typed dataset cannot run with yet:
// several devices where a type has no features (its learned rows, trained
// by sparse Adam on the rows a step reads, are one device's).
func typedRefuses(ds *dataset.Dataset, opt Options) error {
	featureless := slices.IndexFunc(ds.Types, func(ty dataset.VertexType) bool { return ty.FeatDim == 0 })
	switch {
	case opt.Parallel != nil && opt.Parallel.Size() > 1 && featureless >= 0:
		return fmt.Errorf("typed graphs with a type without features (%s: learned rows) train on one device for now (several were asked)", ds.Types[featureless].Name)
	case opt.Features != nil || opt.Graph != nil:
		return fmt.Errorf("typed graphs take their feature stores per type (Options.TypedFeatures) and keep their relations on the training device (placed topologies are one-type)")
	}
	return nil
}

// modelConfig is the nn configuration of the run's model: a typed
// model's from the dataset's schema and the types' input widths.
func (t *Trainer) modelConfig() nn.Config {
	if t.in.Typed != nil {
		return t.cfg.TypedModelConfig(t.ds, t.in.Typed.InDims())
	}
	return t.cfg.ModelConfig(t.ds.FeatDim, t.head.OutDim())
}

// typedCaps is the conservative envelope of a typed run's step.
func (t *Trainer) typedCaps() ([]nn.LayerCaps, [][]int, error) {
	fanouts, err := t.cfg.TypedFanouts(t.ds)
	if err != nil {
		return nil, nil, err
	}
	return typedEnvelope(t.ds, t.seedCap(), fanouts, t.ds.Target), fanouts, nil
}

// TypedEnvelope is the conservative envelope of the trainer's typed step
// (bottom first): no training or evaluation plan the drivers make, tight
// or grown, exceeds it, so a feature store may size its gathers by it.
func (t *Trainer) TypedEnvelope() ([]nn.LayerCaps, error) {
	caps, _, err := t.typedCaps()
	return caps, err
}

// newTypedPlan provisions a typed plan for the conservative envelope and
// reserves the model's workspace for it.
func (t *Trainer) newTypedPlan() (*Plan, error) {
	caps, fanouts, err := t.typedCaps()
	if err != nil {
		return nil, err
	}
	return t.typedPlanFor(caps, fanouts, true)
}

// typedPlanFor provisions a typed plan for caps, and shares it with the
// group and reserves the model's workspace for it when reserve is set
// (else it samples only).
func (t *Trainer) typedPlanFor(caps []nn.LayerCaps, fanouts [][]int, reserve bool) (*Plan, error) {
	p, err := t.samplingPlan(nil, nil, 0)
	if err != nil {
		return nil, err
	}
	if p.Typed, err = t.typedHops(p, caps, fanouts, t.ds.Target, reserve); err != nil {
		p.Free()
		return nil, err
	}
	if !reserve {
		return p, nil
	}
	t.share(p)
	if err := t.model.ReserveTyped(caps); err != nil {
		p.Free()
		return nil, err
	}
	return p, nil
}

// typedHops allocates plan p's typed hops for caps, seeded by vertices of
// type seedType; learn gives the learned tables' rows their gradients.
func (t *Trainer) typedHops(p *Plan, caps []nn.LayerCaps, fanouts [][]int, seedType int, learn bool) (*TypedHops, error) {
	ti := t.in.Typed
	want := make([]bool, len(ti.Embed))
	for i, e := range ti.Embed {
		want[i] = learn && e != nil
	}
	return newTypedHops(p, caps, fanouts, t.model.Config(), ti.InDims(), want, seedType)
}

package train

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/nn"
)

// The typed step's envelope tightened as the one-type step's is
// (envelope.go): the largest sizes of the first steps, sampled at the
// conservative envelope, times the margin, and grown when a later batch
// overflows it.

// observe raises obs (per layer, bottom first) to the live sizes in counts
// (the host copy of th.Counts): each type's sources and each relation's
// edges.
func (th *TypedHops) observe(obs []nn.LayerCaps, counts []int32) {
	for l := range th.Caps {
		for ty, c := range th.Src[l] {
			obs[l].Types[ty].Src = max(obs[l].Types[ty].Src, int(counts[c.Off]))
		}
		for r, b := range th.Rels[l] {
			obs[l].Edges[r] = max(obs[l].Edges[r], int(counts[b.NumEdges.Off]))
		}
	}
}

// overflow describes the first live size in counts (the host copy of
// th.Counts) above its capacity, or is nil.
func (th *TypedHops) overflow(counts []int32) error {
	for l := range th.Caps {
		for ty, c := range th.Src[l] {
			if n := int(counts[c.Off]); n > c.Cap {
				return fmt.Errorf("layer %d: %d sources of type %d, capacity %d", l, n, ty, c.Cap)
			}
		}
		for r, b := range th.Rels[l] {
			if e := int(counts[b.NumEdges.Off]); e > b.NumEdges.Cap {
				return fmt.Errorf("layer %d: %d edges of relation %d, capacity %d", l, e, r, b.NumEdges.Cap)
			}
		}
	}
	return nil
}

// zeroCaps are caps shaped like like, every size 0.
func zeroCaps(like []nn.LayerCaps) []nn.LayerCaps {
	out := make([]nn.LayerCaps, len(like))
	for l, c := range like {
		out[l] = nn.LayerCaps{Types: make([]nn.TypeCaps, len(c.Types)), Edges: make([]int, len(c.Edges))}
	}
	return out
}

// tightenTyped turns observed sizes into a typed envelope: each type's
// sources and each relation's edges the observed maximum times margin, at
// most the conservative bound cons, chained from the seeds (cons's top
// destinations) so that a layer's destinations are the sources of the
// layer above; every relation keeps one edge's room.
func tightenTyped(obs, cons []nn.LayerCaps, margin float64) []nn.LayerCaps {
	L := len(cons)
	out := zeroCaps(cons)
	grow := func(v, bound int) int { return min(bound, int(math.Ceil(float64(v)*margin))) }
	dst := make([]int, len(cons[L-1].Types))
	for ty, c := range cons[L-1].Types {
		dst[ty] = c.Dst
	}
	for h := range L {
		l := L - 1 - h
		for r, e := range cons[l].Edges {
			out[l].Edges[r] = max(1, grow(obs[l].Edges[r], e))
		}
		for ty, c := range cons[l].Types {
			out[l].Types[ty] = nn.TypeCaps{Dst: dst[ty], Src: max(dst[ty], grow(obs[l].Types[ty].Src, c.Src))}
			dst[ty] = out[l].Types[ty].Src
		}
	}
	return out
}

// observeTyped samples the first n steps of the first epoch and returns
// the largest live sizes seen, with the conservative envelope. Sampling
// depends only on the seed and the clock, so the steps sampled here are
// the ones trained later; a group's ranks observe the largest sizes of
// any. The steps are sampled on a sampling-only plan that starts at the
// smallest chained envelope and grows to observeGrowth times what
// overflowed it, each
// step sampled again until nothing overflows: the sizes are those a plan
// at the conservative envelope would see, without its memory (which
// multiplies the fanouts over every relation of every hop: about 11 GB at
// igbh-sim's MLPerf settings).
func (t *Trainer) observeTyped(n int) (obs, cons []nn.LayerCaps, err error) {
	cons, fanouts, err := t.typedCaps()
	if err != nil {
		return nil, nil, err
	}
	p, err := t.typedPlanFor(tightenTyped(onesCaps(cons), cons, 1), fanouts, false)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if p != nil {
			p.Free()
		}
	}()
	perm, steps := t.epochSeeds(0)
	obs = zeroCaps(cons)
	for s := 0; s < min(n, steps); s++ {
		sample := func() (*Plan, []int32, error) {
			counts, err := t.sampleSizes(p, perm, 0, s)
			return p, counts, err
		}
		counts, err := untilFits(fmt.Sprintf("observe step %d", s), sample, func(_ *Plan, counts []int32) error {
			grown := cloneCaps(p.Typed.Caps)
			p.Typed.observe(grown, counts)
			p.Free()
			var err error
			p, err = t.typedPlanFor(tightenTyped(grown, cons, observeGrowth), fanouts, false)
			return err // p nil on failure: nothing left to free
		})
		if err != nil {
			return nil, nil, err
		}
		p.Typed.observe(obs, counts)
	}
	obs, err = t.maxTypedCaps(obs) // a group's plans stay equal: its largest sizes
	return obs, cons, err
}

// observeGrowth is how far past an overflowed size the observing plan
// grows: a sampled size counts what it needed, so a few growths suffice.
const observeGrowth = 1.25

// onesCaps are caps shaped like like, every size 1: observed, the
// smallest envelope in which every type the conservative one reaches has
// a source.
func onesCaps(like []nn.LayerCaps) []nn.LayerCaps {
	out := zeroCaps(like)
	for l := range out {
		for ty := range out[l].Types {
			out[l].Types[ty].Src = 1
		}
		for r := range out[l].Edges {
			out[l].Edges[r] = 1
		}
	}
	return out
}

// maxTypedCaps is caps raised to the largest of every rank of the group
// (caps itself alone), as maxCaps for a one-type plan.
func (t *Trainer) maxTypedCaps(caps []nn.LayerCaps) ([]nn.LayerCaps, error) {
	var flat []int32
	for _, c := range caps {
		for _, ty := range c.Types {
			flat = append(flat, int32(ty.Dst), int32(ty.Src))
		}
		for _, e := range c.Edges {
			flat = append(flat, int32(e))
		}
	}
	flat, err := t.maxHost(flat)
	if err != nil {
		return nil, err
	}
	out := zeroCaps(caps)
	for l := range out {
		for ty := range out[l].Types {
			out[l].Types[ty] = nn.TypeCaps{Dst: int(flat[0]), Src: int(flat[1])}
			flat = flat[2:]
		}
		for r := range out[l].Edges {
			out[l].Edges[r], flat = int(flat[0]), flat[1:]
		}
	}
	return out, nil
}

// replanTypedTight replaces the training plan with a typed plan for the
// envelope tightened over the first observe steps with margin.
func (t *Trainer) replanTypedTight(observe int, margin float64) error {
	obs, cons, err := t.observeTyped(observe)
	if err != nil {
		return err
	}
	return t.replanTypedCaps(tightenTyped(obs, cons, margin))
}

// replanTypedCaps replaces the training plan with a typed plan for caps
// (tight: it may overflow, and grows then).
func (t *Trainer) replanTypedCaps(caps []nn.LayerCaps) error {
	fanouts, err := t.cfg.TypedFanouts(t.ds)
	if err != nil {
		return err
	}
	return t.swapPlan(func() (*Plan, error) {
		p, err := t.typedPlanFor(caps, fanouts, true)
		if err == nil {
			p.Tight = true
		}
		return p, err
	})
}

// growTyped raises the envelope base to the live sizes in counts (the host
// copy of p's SizeCounts, sampled by p, whose hops are laid out as the
// training plan's) with the margin and re-provisions the training plan.
// Sizes past an overflowed one were sampled from clipped inputs where p is
// the tight plan itself; its caller samples again and grows again until
// nothing overflows.
func (t *Trainer) growTyped(base []nn.LayerCaps, p *Plan, counts []int32) error {
	cons, _, err := t.typedCaps()
	if err != nil {
		return err
	}
	obs := cloneCaps(base)
	p.Typed.observe(obs, counts)
	return t.replanTypedCaps(tightenTyped(obs, cons, t.margin()))
}

// cloneCaps is a deep copy of caps.
func cloneCaps(caps []nn.LayerCaps) []nn.LayerCaps {
	out := zeroCaps(caps)
	for l, c := range caps {
		copy(out[l].Types, c.Types)
		copy(out[l].Edges, c.Edges)
	}
	return out
}

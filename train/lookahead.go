package train

import "github.com/fanout-gnn/fanout/featstore"

// lookahead is the replay driver's lookahead for opt: how many steps ahead
// of the one it learns a launch prepares. It is the store's where its
// gathers are started ahead and landed later (lander), whose sites are
// made for it; otherwise ReplayOptions.Lookahead, at least 1.
func (t *Trainer) lookahead(opt ReplayOptions) int {
	if s := t.lander(); s != nil {
		return s.Lookahead()
	}
	return max(opt.Lookahead, 1)
}

// lander is the feature store whose gathers the replay driver starts
// ahead and lands later: a featstore.Ahead store with a lookahead of two
// or more whose rows it fetches beside an earlier step (fetchBeside); nil
// otherwise.
//
// Its gathers issued while AheadSite(k) is set (the ring's prepare of
// plans[k], whose rows no step reads from then on until plans[k]'s) are
// only started, into the store's site k, and each is landed (Land(k)) in
// order before the step that learns plans[k] and before the next start
// into site k: by the ring (start, issue, drain).
// Every other gather (the eager driver, evaluation, a store gathered in
// the step) is whole, in op order. Starts and lands are called when their
// ops are issued, which for a captured step is at its capture; what they
// issue runs at each launch, in that order.
func (t *Trainer) lander() featstore.Ahead {
	if !t.fetchBeside() {
		return nil
	}
	if s, ok := t.in.Feat.(featstore.Ahead); ok && s.Lookahead() >= 2 {
		return s
	}
	return nil
}

// land issues the landing of plans[k]'s rows, started ahead by prepare,
// where the store is a lander.
func (r *replayer) land(k int) {
	if s := r.t.lander(); s != nil && r.plans[k].X != nil {
		s.Land(k)
	}
}

// start prepares a run's first L steps in order, before its first launch:
// plans[0..L-1], steps s..s+L-1 by their clocks (setClocks). Then it lands
// plans[0]'s gather, the one just issued for step s, which the first
// launch learns; launch j lands step s+j+1's (issue).
func (r *replayer) start() {
	for k := range len(r.plans) - 1 {
		r.prepare(k)
	}
	r.land(0)
}

// drain lands, after a run's n launches, the gathers issued for steps the
// run does not learn: launch j gathers step s+j+L and lands step s+j+1's,
// so steps s+n+1..s+n+L-1 are gathered and not landed (none for L = 1).
// Landing them in order leaves no gather in flight between runs, where
// evaluation, growth and the next run's start gather into the same rows
// again.
func (r *replayer) drain(n int) {
	if r.t.lander() == nil {
		return
	}
	size := len(r.plans)
	for j := n + 1; j < n+size-1; j++ {
		r.land(j % size)
	}
}

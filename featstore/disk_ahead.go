package featstore

import "fmt"

// Gathers started steps ahead (SetLookahead): the replay driver starts a
// step's gather L steps before the step (its split and the host's work,
// which the store's watching goroutine does beside the steps in between,
// disk_watch.go) and lands it in the step before (Land: waits for the
// host's work, then copies the rows it answered), so that the host has
// about L-1 steps to copy a step's rows instead of part of one.

// Ahead is implemented by a store whose gathers the replay driver starts
// Lookahead() steps ahead (>= 2) and ends by Land: each gather it issues
// while AheadSite(k) is set (k >= 0) is only started, into site k, until
// Land(k): its rows are whole once landed, though the start may write
// some (the rows the device holds), so they are the gather's from its
// start; with AheadSite(-1) (the default) a gather is whole, in op order.
// Site k is the driver's ring slot of the plan whose rows it fetches (k
// <= Lookahead()), so a captured start and its Land name the same site at
// every replay.
type Ahead interface {
	Lookahead() int
	AheadSite(k int)
	Land(k int)
}

// SetLookahead makes the store start its gathers n steps ahead (n >= 2:
// Ahead, with n+1 sites beside the one of whole gathers, each with a
// staging of its own, which PlanHost counts), or not (n <= 1). It implies
// FetchAhead. Call it before PlanHost and Fill.
func (d *Disk) SetLookahead(n int) {
	d.lookahead = 0
	if n >= 2 {
		d.lookahead = n
		d.ahead = true
	}
}

// Lookahead is the steps ahead the gathers are started (0: whole gathers,
// FetchAhead's one step ahead at most).
func (d *Disk) Lookahead() int { return d.lookahead }

// sites is how many sites Fill makes: one for whole gathers, and one per
// slot of the driver's ring when started ahead.
func (d *Disk) sites() int {
	if d.lookahead >= 2 {
		return d.lookahead + 2
	}
	return 1
}

// inRing says whether k is a slot of the driver's ring, a site gathers
// start into (SetLookahead).
func (d *Disk) inRing(k int) bool { return d.lookahead >= 2 && k >= 0 && k <= d.lookahead }

// AheadSite says which site the gathers issued next start (-1: whole
// gathers).
func (d *Disk) AheadSite(k int) {
	if k >= 0 && !d.inRing(k) {
		d.fail(fmt.Errorf("featstore: disk tier: site %d, but the lookahead is %d", k, d.lookahead))
		k = -1
	}
	d.cur = k
}

// Land issues the end of site k's last started gather: a wait on the
// device for the host's placing (AwaitHost), then the copies of the rows
// its answered list names into the rows the start was given (the start
// copied the rest).
func (d *Disk) Land(k int) {
	s := d.sc
	if s == nil || !d.inRing(k) || !s.sites[1+k].started {
		d.fail(fmt.Errorf("featstore: disk tier: Land(%d) without a gather started there", k))
		return
	}
	t := s.sites[1+k]
	d.ops.AwaitHost(t.state, 1<<sitePlaced, siteIdle)
	d.finish(t, t.n, t.out)
}

package cuda

import (
	"github.com/fanout-gnn/fanout/backend"
)

// Adam calls are queued and launched together (kernels/adam.cu's
// adam_multi, one launch for up to adamMax parameters): a model's update is
// one Adam call per parameter, back to back, with the same step counter and
// configuration. The queue is launched before any other op, copy, read,
// sync, free, mark or the end of a capture, before an Adam call with
// another step counter or configuration, and before one whose arrays
// overlap a queued call's, so the result equals launching each call in
// order. An AddCount of the step counter right before the first call (the
// step advancing it, unless the same Skip flag) is done by the first launch
// (takeCount), one launch less per step.

// adamMax is ADAM_MAX of kernels/adam.cu: parameters per launch.
const adamMax = 16

// adamBlockItems is ADAM_BLOCK_ITEMS of kernels/adam.cu: elements per block.
const adamBlockItems = 512

// adamTensor is one queued parameter: device addresses and length.
type adamTensor struct {
	p, g, m, v uintptr
	n          int64
}

// adamQueue holds queued Adam calls that share tP, cfg and skip; inc is
// added to the step first (takeCount), by the first launch only.
type adamQueue struct {
	ts    []adamTensor
	tP    uintptr
	cfg   backend.AdamConfig // Skip and LRScale are replaced by skip and scale
	skip  uintptr
	scale uintptr
	inc   int32
}

// Adam updates param in place (see kernels/adam.cu); t is the 1-based
// step at t.Off, read on the device (a step below 1 is reported by Sync).
// While cfg.Skip (optional I32 flag, element 0) is non-zero on the device
// the update is skipped, without a host read. The launch is deferred (see
// above): Adam calls in a row become one launch.
func (b *Backend) Adam(param, grad, m, v backend.Buffer, t backend.Count, cfg backend.AdamConfig) {
	c, ck := b.checkAdam(param, grad, m, v, t, cfg)
	defer c.end()
	ps, gs, ms, vs, tp, skip, scale := ck.param, ck.grad, ck.m, ck.v, ck.tP, ck.cfgSkip, ck.cfgLRScale.addr()
	if !c.ok || ps.n == 0 {
		c.flushCount()
		return
	}
	size := ps.n
	q := &b.adamQ
	cfg.Skip, cfg.LRScale = nil, nil
	nt := adamTensor{p: ps.ptr, g: gs.ptr, m: ms.ptr, v: vs.ptr, n: int64(size)}
	if len(q.ts) > 0 && (q.tP != tp || q.cfg != cfg || q.skip != skip.addr() || q.scale != scale || len(q.ts) == adamMax || q.overlaps(nt)) {
		c.flushAdam()
	}
	if len(q.ts) == 0 {
		q.tP, q.cfg, q.skip, q.scale = tp, cfg, skip.addr(), scale
		q.inc = c.takeCount(tp, skip.addr())
	}
	q.ts = append(q.ts, nt)
}

// countQueue is an AddCount call not yet launched (AddCount).
type countQueue struct {
	p, unless uintptr
	delta     int32
	set       bool
}

// flushCount launches the queued AddCount call (add_count).
func (c *call) flushCount() {
	q := &c.b.countQ
	if !q.set {
		return
	}
	p, delta, unless := q.p, q.delta, q.unless
	*q = countQueue{}
	c.launchAddCount(p, int(delta), unless, d1(1), d1(32), 0)
}

// takeCount returns the increment an Adam launch reading its step at tP
// (skipped while the flag at skip is set) applies first: the queued
// AddCount's when it adds to tP unless the same flag (the launch then does
// its work), else 0 after launching the queued call, if any.
func (c *call) takeCount(tP, skip uintptr) int32 {
	q := &c.b.countQ
	if q.set && q.p == tP && q.unless == skip {
		d := q.delta
		*q = countQueue{}
		return d
	}
	c.flushCount()
	return 0
}

// overlaps reports whether any array of t overlaps any array of a queued
// tensor.
func (q *adamQueue) overlaps(t adamTensor) bool {
	bytes := uintptr(t.n) * 4
	for _, o := range q.ts {
		ob := uintptr(o.n) * 4
		for _, x := range [4]uintptr{t.p, t.g, t.m, t.v} {
			for _, y := range [4]uintptr{o.p, o.g, o.m, o.v} {
				if x < y+ob && y < x+bytes {
					return true
				}
			}
		}
	}
	return false
}

// flushAdam launches the queued Adam calls (adam_multi).
func (c *call) flushAdam() {
	b := c.b
	q := &b.adamQ
	if len(q.ts) == 0 {
		return
	}
	var s structArg
	var blocks int64
	for _, t := range q.ts {
		s.ptr(t.p).ptr(t.g).ptr(t.m).ptr(t.v).i64(t.n).i64(blocks)
		blocks += (t.n + adamBlockItems - 1) / adamBlockItems
	}
	s.zeros(48 * (adamMax - len(q.ts))).i32(len(q.ts))
	cfg := q.cfg
	var ticket uintptr
	if q.inc != 0 {
		ticket = c.scratchZeroed(scratchAdam, 4)
	}
	tP, skip, scale, inc := q.tP, q.skip, q.scale, int(q.inc)
	q.ts, q.inc = q.ts[:0], 0
	c.launchAdamMulti(s.done(), tP, cfg.LR, cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay, skip, scale, inc, ticket, d1(uint32(blocks)), d1(256), 0)
}

// flushDeferred launches the work queued by earlier calls before op: the
// Adam queue unless op is Adam, the AddCount call unless op is Adam or
// Accumulate (which take the call or launch it), the FlagOverflow queue
// unless op is FlagOverflow, the padding restores unless op is a Linear
// op, the MeanWeights call unless op is a forward aggregation (which takes
// it or launches it, takeMean). (Each op flushes the queues of other
// kinds, so at most one kind is pending.)
// Called by beginAlways.
func (c *call) flushDeferred() {
	if c.op != "Adam" {
		c.flushAdam()
	}
	switch c.op {
	case "Adam", "Accumulate": // they take it (takeCount, Accumulate) or launch it
	default:
		c.flushCount()
	}
	if c.op != "FlagOverflow" {
		c.flushFlags()
	}
	switch c.op {
	case "Linear", "LinearBackwardData", "LinearBackwardWeight":
	default:
		c.flushPads()
	}
	switch c.op {
	case "Aggregate", "AggregateConcat", "AggregateConcatTable": // takeMean
	default:
		c.flushMean()
	}
}

// hasDeferred reports whether any queue holds work (the lock is held).
func (b *Backend) hasDeferred() bool {
	return len(b.pads) > 0 || len(b.adamQ.ts) > 0 || len(b.flagQ.cs) > 0 || b.meanQ.set || b.countQ.set
}

// SparseAdam steps rows ids[:n] of table and of its moments m and v with
// the rows of grad, each element as Adam steps it (see backend.Dense and
// kernels/adam.cu); the other rows are untouched. The step at t.Off and
// cfg.Skip are read on the device. One launch, a warp per row over
// n.Cap; it is not queued with Adam's.
func (b *Backend) SparseAdam(table, m, v backend.Buffer, dim int, ids backend.Buffer, n backend.Count, grad backend.Buffer, t backend.Count, cfg backend.AdamConfig) {
	c, ck := b.checkSparseAdam(table, m, v, dim, ids, n, grad, t, cfg)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchSparseAdam(&ck, d1(c.blocks(int64(n.Cap), 8)), d1(256), 0)
}

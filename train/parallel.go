package train

import (
	"context"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
)

// Data parallelism. A Trainer made with Options.Parallel is one rank of a
// group that trains one model on a global batch of Config.Batch seeds: rank
// r takes the r-th contiguous slice of Config.Batch/size seeds of every
// global batch, samples, gathers and runs forward and backward on its
// slice, divides its summed loss by the whole batch's live seeds (inside
// the loss kernel: nn.Share), and all-reduces the gradients before Adam,
// so every rank applies the same update: the one-device gradient up to the
// order of the sums. The drivers (eager, replay) are unchanged apart
// from which seeds a rank takes; train/multigpu runs the ranks.

// rankSize returns the trainer's rank and the group's size (0, 1 alone).
func (t *Trainer) rankSize() (rank, size int) {
	if c := t.opt.Parallel; c != nil {
		return c.Rank(), c.Size()
	}
	return 0, 1
}

// group is the trainer's collective when it is one rank of several, nil
// alone (no group, or a group of one, whose collectives are identities).
func (t *Trainer) group() backend.Collective {
	if c := t.opt.Parallel; c != nil && c.Size() > 1 {
		return c
	}
	return nil
}

// batch is the number of seeds a step of this rank takes at most (the
// plan's seed capacity): Config.Batch divided by the group's size.
func (t *Trainer) batch() int {
	_, size := t.rankSize()
	return t.cfg.Batch / size
}

// rankSeeds is how many seeds of an epoch this rank takes (the same every
// epoch).
func (t *Trainer) rankSeeds() int {
	rank, size := t.rankSize()
	return RankShareLen(t.items(), t.cfg.Batch, rank, size)
}

// RankShare is a rank's share of an epoch's order when a group of size
// ranks splits every step's batch of batch items: the rank-th contiguous
// part of each step's batch, the steps one after another, so that step s
// of the rank is items [s·batch/size, (s+1)·batch/size) of the result
// (fewer at the end). Alone (size 1) it is order itself.
func RankShare(order []int32, batch, rank, size int) []int32 {
	if size <= 1 {
		return order
	}
	out := make([]int32, 0, RankShareLen(len(order), batch, rank, size))
	b := batch / size
	for s := 0; s*batch < len(order); s++ {
		out = append(out, order[min(len(order), s*batch+rank*b):min(len(order), s*batch+(rank+1)*b)]...)
	}
	return out
}

// RankShareLen is len(RankShare(order, ...)) for an order of n items,
// without making it.
func RankShareLen(n, batch, rank, size int) int {
	if size <= 1 {
		return n
	}
	b, total := batch/size, 0
	for s := 0; s*batch < n; s++ {
		total += min(n, s*batch+(rank+1)*b) - min(n, s*batch+rank*b)
	}
	return total
}

// stepSeeds is step s's slice of a rank's epoch seeds (may be empty on the
// last step of a group).
func (t *Trainer) stepSeeds(seeds []int32, s int) []int32 {
	b := t.batch()
	return seeds[min(len(seeds), s*b):min(len(seeds), (s+1)*b)]
}

// globalLive is the number of live seeds of global step s.
func (t *Trainer) globalLive(s int) int {
	return max(0, min(t.cfg.Batch, t.items()-s*t.cfg.Batch))
}

// reduceFlag all-reduces the step's overflow flag across the group (a
// no-op alone), on the second stream beside the forward pass: every
// overflow check of the step was issued before it, nothing before Adam
// reads the flag, and reduceGrads waits for it, so its latency (a
// collective's, about 10 µs on two H100s) hides behind the forward pass.
// Where the flag travels with the gradients (flagWithGrads), reduceGrads
// reduces it instead. The replay driver's warm-up step before a capture
// runs with reduce off (its results are dropped; every rank re-captures at
// the same point, see maxHost).
func (t *Trainer) reduceFlag(flag backend.Buffer) {
	c := t.group()
	if c == nil || t.noReduce || flag == nil || t.flagWithGrads() {
		return // alone, an all-reduce is the identity
	}
	backend.RunBeside(t.be, func() { c.AllReduceMax(flag) })
}

// flagWithGrads says whether a step's overflow flag is reduced in the
// gradients' round (backend.SumMax: the peer-memory sum of one process's
// GPUs, and the CPU group) rather than beside the forward pass. Then the
// gradients' sum need not join the second stream, which holds the next
// step's sampling from the backward pass on: joining it made every rank
// wait for that sampling before its sum (two H100s, products-sim: 2172
// steps/s joined, 2268 not). Not where something reads the group's flag
// before Adam (the hybrid mode's hot rows hand their gradients over in the
// backward pass, unless the flag is set), nor where the next step's fetch
// runs beside (its collectives must be ordered with the gradients' by
// joining), nor without one arena of gradients.
func (t *Trainer) flagWithGrads() bool {
	_, ok := t.group().(backend.SumMax)
	return ok && !t.fetchBeside() && (t.in == nil || t.in.Hot == nil) && t.model.Grads() != nil
}

// reduceGrads all-reduces every gradient across the group, after the flag
// (reduceFlag); a no-op alone.
func (t *Trainer) reduceGrads(flag backend.Buffer) {
	c := t.group()
	if c == nil || t.noReduce {
		return
	}
	defer t.reduceTaskGrads(c)
	if flag != nil && t.flagWithGrads() {
		c.(backend.SumMax).AllReduceSumMax(t.model.Grads(), flag)
		return
	}
	// The flag's all-reduce and, with a remote feature store, the next
	// step's fetch run on the second stream, their collectives beside the
	// backward pass. NCCL does not promise an order between one
	// communicator's operations on two streams, and a rank whose
	// all-reduce ran before its all-to-all while a peer's ran after would
	// wait for ever: every rank joins the second stream here, so its
	// collectives run in one order (flag, fetch, gradients).
	backend.JoinBeside(t.be)
	// One call for every gradient (the model's arena): each collective
	// costs a launch and a round of the ring's latency (about 10 µs on
	// two H100s), more than its bytes.
	if g := t.model.Grads(); g != nil {
		c.AllReduceSum(g)
		return
	}
	for _, p := range t.model.Params() {
		c.AllReduceSum(p.G)
	}
}

// reduceTaskGrads all-reduces the task's own parameters' gradients (the
// link task's decoder), after the model's.
func (t *Trainer) reduceTaskGrads(c backend.Collective) {
	for _, p := range t.head.Params() {
		c.AllReduceSum(p.G)
	}
}

// share marks a plan of a group's rank and hooks the gradient all-reduce.
func (t *Trainer) share(p *Plan) {
	if t.opt.Parallel != nil {
		p.Shared = true
		p.ReduceFlag, p.Reduce = t.reduceFlag, t.reduceGrads
	}
}

// agreeWindow is how many replayed steps a rank of a group runs between
// two agreements on stopping (stopAgreed): each costs a host round trip
// and a one-word all-reduce (products-sim: 64 steps are about 30 ms of
// work). The eager driver, which waits for every step anyway, agrees at
// every step.
const agreeWindow = 64

// stopAgreed says whether the run stops here because ctx was cancelled.
// Alone, as soon as ctx is. A rank of a group checks only where due (the
// replay driver: before a run's first step and at every agreeWindow-th
// step of the epoch; the eager driver: every step), and then all ranks
// stop if any saw ctx cancelled: the ranks of a group see a cancellation
// at different steps (a signal reaches processes, and goroutines poll, at
// different times), and a rank that stopped alone would leave its peers
// waiting in the next step's collectives. Every rank must be due at the
// same steps.
func (t *Trainer) stopAgreed(ctx context.Context, due bool) (bool, error) {
	if t.group() == nil {
		return ctx.Err() != nil, nil
	}
	if !due {
		return false, nil
	}
	seen := int32(0)
	if ctx.Err() != nil {
		seen = 1
	}
	all, err := t.maxHost([]int32{seen})
	if err != nil {
		return false, err
	}
	return all[0] != 0, nil
}

// reduceHost sums host values across the group through a backend buffer
// (epoch totals); alone it returns vals unchanged.
func (t *Trainer) reduceHost(vals []float32) ([]float32, error) {
	return hostReduce(t, vals, backend.Collective.AllReduceSum)
}

// maxHost takes the element-wise maximum of host values across the group
// through a backend buffer; alone it returns vals unchanged. The replay
// driver's sizes go through it (observed sizes, and the counts of a batch
// that overflowed, in training or evaluation), so every rank of a group
// provisions the same envelope and grows it, and re-captures its step, at
// the same points: the ranks' collectives inside a step (the features'
// all-to-alls) then have the same sizes and run in lockstep.
func (t *Trainer) maxHost(vals []int32) ([]int32, error) {
	return hostReduce(t, vals, backend.Collective.AllReduceMax)
}

// hostReduce reduces host values across the group with op, through a
// backend buffer.
func hostReduce[T int32 | float32](t *Trainer, vals []T, op func(backend.Collective, backend.Buffer)) ([]T, error) {
	c := t.opt.Parallel
	if c == nil || len(vals) == 0 {
		return vals, nil
	}
	buf, err := t.be.Upload(append([]T(nil), vals...))
	if err != nil {
		return nil, err
	}
	defer t.be.Free(buf)
	op(c, buf)
	out := make([]T, len(vals))
	t.be.Read(out, buf, 0)
	return out, t.sync()
}

// maxCaps is maxHost over capacities.
func (t *Trainer) maxCaps(caps []nn.Caps) ([]nn.Caps, error) {
	flat := make([]int32, 0, 3*len(caps))
	for _, c := range caps {
		flat = append(flat, int32(c.Dst), int32(c.Edges), int32(c.Src))
	}
	flat, err := t.maxHost(flat)
	if err != nil {
		return nil, err
	}
	out := make([]nn.Caps, len(caps))
	for i := range out {
		out[i] = nn.Caps{Dst: int(flat[3*i]), Edges: int(flat[3*i+1]), Src: int(flat[3*i+2])}
	}
	return out, nil
}

// shareStart makes every rank of a group start where rank 0 starts. Only
// rank 0 holds the run directory, so only it resumes from last.ckpt
// (maybeResume); alone, the others would train from epoch 1 with their
// initial weights: the ranks would then train different numbers of steps
// (the group waits for ever at the end: `fanout launch ... --resume`
// never exited) and different weights. Every rank takes rank 0's
// position in the run, bit for bit through maxHost (the other ranks bring
// the least int32), and its weights and Adam moments through an
// all-reduce sum to which the other ranks bring zeros (x + 0 = x).
func (t *Trainer) shareStart() error {
	c := t.group()
	if c == nil {
		return nil
	}
	lead := c.Rank() == 0
	s := t.state
	words := []int32{int32(s.Epoch), int32(s.StepInEpoch), s.AdamT, int32(s.BestEpoch), int32(s.SinceBest)}
	for _, f := range []float64{s.BestValid, s.TestAtBest, s.Seconds} {
		b := math.Float64bits(f)
		words = append(words, int32(uint32(b>>32)), int32(uint32(b)))
	}
	if !lead {
		for i := range words {
			words[i] = math.MinInt32
		}
	}
	words, err := t.maxHost(words)
	if err != nil {
		return err
	}
	f := func(i int) float64 {
		return math.Float64frombits(uint64(uint32(words[i]))<<32 | uint64(uint32(words[i+1])))
	}
	t.state = State{Epoch: int(words[0]), StepInEpoch: int(words[1]), AdamT: words[2], BestEpoch: int(words[3]),
		SinceBest: int(words[4]), BestValid: f(5), TestAtBest: f(7), Seconds: f(9),
		// rank 0's, which alone writes the summary
		BestMetrics: s.BestMetrics, TestMetrics: s.TestMetrics, BestStep: s.BestStep, Elapsed: s.Elapsed}
	for _, p := range t.Params() {
		for _, b := range []backend.Buffer{p.W, p.M, p.V} {
			if !lead {
				t.be.Fill(b, 0)
			}
			c.AllReduceSum(b)
		}
	}
	t.be.Write(t.plan.Counts, t.plan.AdamT.Off, []int32{t.state.AdamT})
	return t.sync()
}

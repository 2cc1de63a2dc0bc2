package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
)

// ReplayOptions tune the replay driver.
type ReplayOptions struct {
	Margin  float64 // envelope = largest observed size × Margin (default DefaultMargin)
	Observe int     // batches sampled to size the envelope (default 16)
	// Caps, when set, is the envelope to start from (bottom first) instead
	// of observing; tests use it to force overflows. The chunks of an
	// exchanged feature store then hold the gathers' capacity, or Chunk
	// rows when Chunk > 0.
	Caps  []nn.Caps
	Chunk int
	// BeforeCapture, when set, runs once the plan and the model's
	// workspace are provisioned for the envelope and before the step is
	// first captured: the hybrid driver sizes its feature cache there, from
	// the memory the step leaves.
	BeforeCapture func(EnvelopeReport) error
	// Segment, when > 0, ends every launch run of training steps at the
	// multiples of Segment, and BeforeRun, when set, runs before each run
	// with the run's first step, once the device has finished every
	// earlier step: the hybrid mode's super-batches hand over their hot
	// rows there. After an overflow BeforeRun sees the re-run step again.
	Segment   int
	BeforeRun func(epoch, step int) error
	// InOrder issues the next step's sampling after this step's work
	// instead of beside it (backend.Concurrent), for measuring the
	// overlap; the results are the same.
	InOrder bool
	// Conservative keeps a typed plan at its conservative envelope (the
	// eager driver's, which no batch exceeds) instead of tightening it.
	Conservative bool
	// Lookahead is how many steps ahead of the one it learns a launch
	// prepares (samples, and with a featstore.Remote store fetches the
	// rows of): the driver keeps a ring of Lookahead+1 plans and captured
	// steps. 0 or 1: the next step. A lander store's lookahead
	// (featstore.Ahead) replaces it.
	Lookahead int
}

// ReplayStats is what the replay driver did.
type ReplayStats struct {
	Captures  int            `json:"captures"`      // training steps captured (1 + one per growth)
	EvalCaps  int            `json:"eval_captures"` // evaluation passes captured (per split and plan)
	Overflows int            `json:"overflows"`     // steps whose envelope overflowed and were re-run
	Launches  int            `json:"launches"`      // graph launches
	Envelope  EnvelopeReport `json:"envelope"`
	BusyS     float64        `json:"busy_s"` // device time inside replays (when the backend has a Timer)
	WallS     float64        `json:"wall_s"` // wall time of the launch loops
	GrowS     float64        `json:"grow_s"` // wall time of growing the envelope and capturing again after overflows
}

// DefaultMargin is the envelope's margin over the largest observed sizes.
// Every padding row costs the step time and memory (products-sim on an
// H200: 1.15 → 1.05 is 3.7% faster and 27 MiB smaller) while no batch of 5
// epochs overflowed at 1.05 (docs/perf.md).
const DefaultMargin = 1.05

// margin is the replay driver's envelope margin.
func (t *Trainer) margin() float64 {
	if t.replayMargin > 0 {
		return t.replayMargin
	}
	return DefaultMargin
}

// replayer holds the device state of the replay driver: the epoch's
// shuffled seeds, the overflow flag, the loss accumulators and the captured
// steps.
//
// Lookahead. The driver keeps a ring of L+1 plans and L+1 captured steps,
// L the lookahead (Trainer.lookahead: ReplayOptions.Lookahead or a lander
// store's, at least 1). plans[0] is the trainer's plan and plans[1..L] its
// twins, with sampling buffers of their own. graphs[k] learns from the
// batch sampled into plans[k] while it prepares the step L ahead into
// plans[(k+L)%(L+1)] (the plan the launch before learnt), beside its
// backward pass (backend.Concurrent: a second CUDA stream in the graph),
// and the launches go round the ring. A plan's clock is its step's; each
// graph advances its plan's clock by L+1. A run prepares its first L steps
// in order before the first launch; the samples its last L launches make
// are not used. The overflow checks of a plan's counts run on the stream
// when its batch is learnt, so the flag names the first step that did not
// fit, and no step before it is skipped. With a lander store, launch j
// lands the rows of the step after it (issue).
type replayer struct {
	t     *Trainer
	cap   backend.Capturer
	opt   ReplayOptions
	perm  backend.Buffer // I32 [len(train)]: this rank's seeds of the epoch
	nPerm int            // how many of them are live
	// A group's rank counts the whole batch's live seeds on the device by
	// slicing a stand-in permutation of the training split (values unused).
	global, globalOut backend.Buffer    // I32 [len(train)], I32 [Config.Batch]; nil alone
	flag              backend.Buffer    // I32 [3]: overflowed, epoch, step
	acc               backend.Buffer    // F32 [2]: loss sum, correct sum
	graphs            []backend.Replay  // graphs[k] learns plans[k]'s batch, prepares plans[(k+L)%(L+1)]
	plans             []*Plan           // the plan the graphs were captured on, and its L twins
	chunk             int               // the feature chunks' rows it was captured with
	loss              backend.Buffer    // the model's loss (F32 [1]) in the captured step
	marks             [][2]backend.Mark // device time stamps around launches, settled later
	stats             ReplayStats
	// fetched[k] (I32 [3]) is plans[k]'s fetch checked against a chunked
	// store's chunks when it was issued (prepare); nil without fetched
	// chunks.
	fetched []backend.Buffer

	// The training loss's last TensorBoard point: the epoch's loss sum and
	// the step it ended at (windowLoss).
	tbSum  float32
	tbStep int

	evals   map[int]*evalGraph // captured evaluations by split
	evalAcc backend.Buffer     // F32 [2]: evaluation loss and correct sums
}

// settleMarks adds the device time inside the timed launches to the busy
// time and releases the marks. It runs after the work is done, so waiting
// on the marks stalls nothing.
func (r *replayer) settleMarks() {
	for _, m := range r.marks {
		if d, err := m[1].Since(m[0]); err == nil {
			r.stats.BusyS += d.Seconds()
		}
		m[0].Close()
		m[1].Close()
	}
	r.marks = r.marks[:0]
}

// ErrNoCapture is returned when replay is asked of a backend that cannot
// capture; wrap the backend with package record, or use the eager driver.
var ErrNoCapture = errors.New("the backend cannot capture a step (no backend.Capturer)")

// newReplayer sizes the envelope (observed or given), provisions the plan
// for it, allocates the driver's buffers and captures the step.
func (t *Trainer) newReplayer(opt ReplayOptions) (*replayer, error) {
	c, ok := t.be.(backend.Capturer)
	if !ok {
		return nil, ErrNoCapture
	}
	if opt.Margin <= 0 {
		opt.Margin = DefaultMargin
	}
	t.replayMargin = opt.Margin
	if opt.Observe <= 0 {
		opt.Observe = 16
	}
	t.replayAhead = t.lookahead(opt)
	r := &replayer{t: t, cap: c, opt: opt, evals: map[int]*evalGraph{}, nPerm: t.rankSeeds(),
		graphs: make([]backend.Replay, t.replayAhead+1), plans: make([]*Plan, t.replayAhead+1)}
	defer func() {
		if r.graphs[0] == nil {
			r.free()
		}
	}()
	if err := r.envelope(opt); err != nil {
		return nil, err
	}
	var err error
	for _, a := range []struct {
		dst  *backend.Buffer
		dt   backend.DType
		n    int
		skip bool
	}{{&r.perm, backend.I32, t.items(), false}, {&r.flag, backend.I32, 3, false}, {&r.acc, backend.F32, 2, false}, {&r.evalAcc, backend.F32, 2, false},
		{&r.global, backend.I32, t.items(), t.opt.Parallel == nil}, {&r.globalOut, backend.I32, t.cfg.Batch, t.opt.Parallel == nil}} {
		if a.skip {
			continue
		}
		if *a.dst, err = t.be.Alloc(a.dt, a.n); err != nil {
			return nil, err
		}
	}
	if t.fetchBeside() && t.chunked() != nil {
		for range r.plans {
			b, err := t.be.Alloc(backend.I32, 3)
			if err != nil {
				return nil, err
			}
			r.fetched = append(r.fetched, b)
		}
	}
	if err := r.pair(); err != nil {
		return nil, err
	}
	if opt.BeforeCapture != nil {
		if err := opt.BeforeCapture(r.stats.Envelope); err != nil {
			return nil, err
		}
	}
	if err := r.capture(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *replayer) free() {
	r.settleMarks()
	r.freeEvals()
	r.closeGraphs()
	r.freeTwins()
	for _, b := range append([]backend.Buffer{r.perm, r.flag, r.acc, r.evalAcc, r.global, r.globalOut}, r.fetched...) {
		if b != nil {
			r.t.be.Free(b)
		}
	}
}

// epoch trains the current epoch from StepInEpoch on by replaying the
// captured step. Overflowed steps are re-run after the envelope grows.
func (r *replayer) epoch(ctx context.Context) (EpochStats, error) {
	t := r.t
	epoch := t.state.Epoch
	perm, steps := t.epochSeeds(epoch)
	st := EpochStats{Epoch: epoch + 1, Steps: steps}
	if len(perm) != r.nPerm {
		return st, fmt.Errorf("epoch %d: %d seeds for this rank, the captured step slices %d", epoch+1, len(perm), r.nPerm)
	}
	if len(perm) > 0 {
		t.be.Write(r.perm, 0, perm)
	}
	t.be.Fill(r.acc, 0)
	r.tbSum, r.tbStep = 0, t.state.StepInEpoch-1
	start := t.loop.beginEpoch()
	first := t.state.StepInEpoch
	for s := first; s < steps; {
		n, stop, err := r.run(ctx, epoch, s, steps)
		if err != nil {
			return st, err
		}
		s += n
		t.state.StepInEpoch = s
		if stop && s < steps {
			t.state.Seconds += t.loop.trainedSince(start)
			return st, ErrInterrupted
		}
		if n > 0 && t.evalDue(s, steps) {
			// Runs end at the validations (nextEval): the steps before
			// are done on the device.
			if err := t.validateWithin(ctx, st, s, func(f *EpochStats) error { return r.figures(f, first, start) }); err != nil {
				return st, err
			}
		}
	}
	st.Step = steps
	if err := r.figures(&st, first, start); err != nil {
		return st, err
	}
	r.settleMarks()
	t.state.Seconds += st.Seconds
	return st, nil
}

// figures sets st's training figures from the device's sums of the
// epoch's steps from first to st.Step, trained since start.
func (r *replayer) figures(st *EpochStats, first int, start time.Time) error {
	t := r.t
	acc := make([]float32, 2)
	t.be.Read(acc, r.acc, 0)
	if err := t.sync(); err != nil {
		return err
	}
	seen := t.head.Outcomes(min(t.items(), st.Step*t.cfg.Batch) - min(t.items(), first*t.cfg.Batch))
	return t.epochFigures(st, float64(acc[0]), int64(acc[1]), seen, st.Step-first, start)
}

// run launches the captured step for steps [s, steps), up to the epoch's
// next validation within it (nextEval) and the next multiple of
// ReplayOptions.Segment, and returns how many were applied, and whether
// the run stopped because ctx was cancelled (the caller then stops too).
// When a step overflowed its envelope, it and
// every later step launched are no-ops on the device; run then grows the
// envelope, re-captures, and returns the steps before it, so that the
// caller continues from the overflowed step. The run prepares its first L
// steps in order before its first launch (start) and, after its last,
// lands the gathers of the steps it does not learn (drain).
//
// In a group every rank launches the same steps, whatever it alone sees:
// each launch holds the group's collectives, and a rank that launched one
// more than its peers would wait in it for ever (found on two GPUs: rank 0,
// which reports its losses, stopped at an overflowed step that its peers
// launched past). So a rank of a group stops early only where the group
// agrees (stopAgreed: before a run's first step and every agreeWindow
// steps of the epoch), and never at a flag its step reporting saw: the
// flag is the same on every rank (all-reduced in the step), the steps
// after it are no-ops, and the growth below starts from the step it names
// on every rank alike.
func (r *replayer) run(ctx context.Context, epoch, s, steps int) (int, bool, error) {
	t := r.t
	if r.plans[0] != t.plan || r.chunk != t.chunkRows() {
		// Evaluation grew the shared plan or the feature chunks: capture
		// the step anew.
		if err := r.capture(); err != nil {
			return 0, false, err
		}
	}
	end := t.nextEval(s, steps)
	if r.opt.Segment > 0 {
		end = min(end, (s/r.opt.Segment+1)*r.opt.Segment)
	}
	if r.opt.BeforeRun != nil {
		if err := r.opt.BeforeRun(epoch, s); err != nil {
			return 0, false, err
		}
	}
	r.setClocks(epoch, s)
	t.be.Fill(r.flag, 0)
	r.start()
	// The device time of the run: one mark before its first launch and one
	// after its last (two per launch cost four driver calls a step and
	// their settling two more, on the host's path at the epoch's end).
	var before backend.Mark
	if timer, ok := t.be.(backend.Timer); ok && t.opt.OnStep == nil {
		before, _ = timer.Mark()
	}
	start := time.Now()
	launched := 0
	stop := false
	reporting := t.opt.OnStep != nil
	loss := make([]float32, 1)
	flag := make([]int32, 3)
	accNow := make([]float32, 2)
	for i := s; i < end; i++ {
		window := i > s && i%agreeWindow == 0
		if window && !reporting {
			// Every window, wait for the steps launched and look at the
			// flag: the host runs far ahead of the device, and every step
			// launched after an overflowed one does all its work (only its
			// effects are skipped) and then runs again (papers-sim: one
			// overflow cost a quarter of an epoch). The flag is
			// all-reduced inside the step, so every rank of a group stops
			// at the same launch.
			t.be.Read(flag, r.flag, 0)
			if t.tb != nil {
				t.be.Read(accNow, r.acc, 0)
			}
			if err := t.sync(); err != nil {
				return 0, false, fmt.Errorf("epoch %d replay: %w", epoch+1, err)
			}
			if flag[0] != 0 {
				break
			}
			if err := r.windowLoss(epoch, i-1, accNow[0]); err != nil {
				return 0, false, err
			}
		}
		var err error
		// A group agrees on stopping at the same windows, right after the
		// flag's round trip has drained the device.
		if stop, err = t.stopAgreed(ctx, i == s || window); err != nil {
			return 0, false, err
		}
		if stop {
			break
		}
		r.graphs[(i-s)%len(r.graphs)].Launch()
		launched++
		t.progress(t.epochStage(), i+1, steps)
		if reporting {
			t.be.Read(loss, r.loss, 0)
			t.be.Read(flag, r.flag, 0)
			if err := t.sync(); err != nil {
				return 0, false, err
			}
			if flag[0] != 0 {
				if t.group() == nil {
					break // alone: the later steps would be no-ops
				}
				reporting = false
				continue
			}
			t.opt.OnStep(epoch, i, loss[0])
		}
	}
	r.drain(launched)
	if before != nil {
		if after, err := t.be.(backend.Timer).Mark(); err == nil {
			r.marks = append(r.marks, [2]backend.Mark{before, after})
		} else {
			before.Close()
		}
	}
	t.be.Read(flag, r.flag, 0)
	if err := t.sync(); err != nil {
		return 0, false, fmt.Errorf("epoch %d replay: %w", epoch+1, err)
	}
	r.stats.WallS += time.Since(start).Seconds()
	r.stats.Launches += launched
	if flag[0] == 0 {
		return launched, stop, nil
	}
	f := int(flag[2])
	if f < s || f >= s+launched {
		return 0, false, fmt.Errorf("epoch %d: overflow flag names step %d outside the launched steps %d..%d", epoch+1, f, s, s+launched-1)
	}
	r.stats.Overflows++
	var g growTimes
	if err := r.grow(epoch, f, &g); err != nil {
		return 0, false, err
	}
	total := g.sample + g.provision + g.capture
	r.stats.GrowS += total.Seconds()
	t.progressf("replay: step %d of epoch %d overflowed the envelope; %d later launches discarded; grown and captured again in %.0f ms (sampling %.0f, provisioning %.0f, capture %.0f)\n",
		f+1, epoch+1, s+launched-1-f, ms(total), ms(g.sample), ms(g.provision), ms(g.capture))
	return f - s, stop, nil
}

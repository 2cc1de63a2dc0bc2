package multigpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// The ranks of a group must issue the same collectives in the same order,
// whatever each rank alone sees (its step reporting, when it polls for a
// cancellation): NCCL waits for ever on a rank that issued one more, and
// the in-process collective fails the group when the ranks' calls differ.
// These tests drive the group as the command and the GPU tests do (only
// rank 0 reports its steps) under a deadline.

// groupDeadline bounds a group run in a test: past it the group is
// aborted, so that a deadlock fails the test instead of hanging it.
const groupDeadline = 2 * time.Minute

// cpuGroup is n record-wrapped CPU backends joined in process.
func cpuGroup(t *testing.T, n int) ([]Rank, []*inproc.Comm) {
	t.Helper()
	bes, comms := traintest.CPUGroup(t, n, true)
	ranks := make([]Rank, n)
	for i := range ranks {
		ranks[i] = Rank{Backend: bes[i], Coll: comms[i]}
	}
	return ranks, comms
}

// runDeadline runs the group and fails the test when it has not returned
// within deadline (after aborting it).
func runDeadline(t *testing.T, deadline time.Duration, ctx context.Context, ds *dataset.Dataset, cfg train.Config, ranks []Rank, replay bool, ropt train.ReplayOptions) error {
	t.Helper()
	var err error
	within(t, deadline, ranks, func() { _, err = Run(ctx, ds, cfg, ranks, modeOf(replay), ropt) })
	return err
}

// runApart runs each rank as a process of a job would, with a context of
// its own, and returns each rank's error; past groupDeadline it aborts the
// group and fails the test.
func runApart(t *testing.T, ctxs []context.Context, ds *dataset.Dataset, cfg train.Config, ranks []Rank, replay bool) []error {
	t.Helper()
	errs := make([]error, len(ranks))
	within(t, groupDeadline, ranks, func() {
		var wg sync.WaitGroup
		for i := range ranks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = runRank(ctxs[i], ds, cfg, ranks[i], modeOf(replay), train.ReplayOptions{})
			}()
		}
		wg.Wait()
	})
	return errs
}

// within runs fn, and when it has not returned after deadline aborts the
// ranks' collectives (which releases ranks waiting in them), waits for fn
// and fails the test: the ranks' collectives were out of step.
func within(t *testing.T, deadline time.Duration, ranks []Rank, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(deadline):
		abortAll(ranks)
		<-done
		t.Fatalf("the ranks did not finish in %v: one waits for a collective its peers never issue", deadline)
	}
}

func abortAll(ranks []Rank) {
	for _, r := range ranks {
		if a, ok := r.Coll.(aborter); ok {
			a.Abort(errors.New("test deadline"))
		}
	}
}

// TestOnlyRankZeroReports: with chunks far below what a gather asks of a
// peer, steps overflow; rank 0 reports every step (and reads the overflow
// flag after each launch), the other rank does not. Every rank must still
// launch the same steps, and rank 0's losses are those of the whole table
// on every rank. Before the fix rank 0 stopped launching at the flagged
// step while rank 1 launched past it (found on two GPUs as
// TestGPUExchangedFeatures hanging).
func TestOnlyRankZeroReports(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Epochs = 1
	rank0 := func(exchange bool) ([]float32, *Exchange) {
		ranks, _ := cpuGroup(t, 2)
		var x *Exchange
		if exchange {
			var err error
			if x, err = PlaceExchanged(ds, ranks, 1, nil, true); err != nil {
				t.Fatal(err)
			}
		}
		var losses []float32
		ranks[0].Options.OnStep = func(_, _ int, l float32) { losses = append(losses, l) }
		if err := runDeadline(t, groupDeadline, context.Background(), ds, cfg, ranks, true, train.ReplayOptions{Chunk: 8}); err != nil {
			t.Fatal(err)
		}
		return losses, x
	}
	want, _ := rank0(false)
	got, x := rank0(true)
	if !slices.Equal(got, want) {
		t.Fatalf("rank 0's losses with overflowing chunks differ from the whole table's\n%v\n%v", got, want)
	}
	c, err := x.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if c.Overflow == 0 {
		t.Fatalf("no gather overflowed its chunks: %+v", c)
	}
}

// TestInterruptStopsRanksAlike: a cancellation that only one rank sees
// (as when a signal reaches one process of a job) stops every rank at the
// same step, in the replay and the eager driver: every rank returns
// train.ErrInterrupted, none is left waiting in a collective, and all
// reported the same steps. Before the fix the rank that saw nothing waited
// in the next step's collectives for ever.
func TestInterruptStopsRanksAlike(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Epochs = 3
	for _, replay := range []bool{true, false} {
		t.Run(fmt.Sprintf("replay=%v", replay), func(t *testing.T) {
			ranks, _ := cpuGroup(t, 2)
			seen, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctxs := []context.Context{context.Background(), seen}
			var mu sync.Mutex
			steps := make([]int, len(ranks))
			for i := range ranks {
				ranks[i].Options.OnStep = func(epoch, step int, _ float32) {
					mu.Lock()
					steps[i]++
					mu.Unlock()
					if i == 1 && epoch == 1 && step == 2 {
						cancel()
					}
				}
			}
			errs := runApart(t, ctxs, ds, cfg, ranks, replay)
			for r, err := range errs {
				if !errors.Is(err, train.ErrInterrupted) {
					t.Errorf("rank %d returned %v, want the interruption", r, err)
				}
			}
			if steps[0] != steps[1] || steps[0] == 0 {
				t.Fatalf("ranks reported %v steps", steps)
			}
			t.Logf("both ranks stopped after %d steps", steps[0])
		})
	}
}

// TestGroupResumes: a group resumed from last.ckpt, which only rank 0
// holds (its run directory, as under a launcher), trains the remaining
// epoch to bitwise the losses of an uninterrupted run, in the replay and
// the eager driver, within the deadline. Before the fix only rank 0
// resumed: rank 1 started again from epoch 1 with its initial weights, and
// the group waited for ever once rank 0 was done.
func TestGroupResumes(t *testing.T) {
	ds, cfg := tiny(t)
	for _, replay := range []bool{true, false} {
		t.Run(fmt.Sprintf("replay=%v", replay), func(t *testing.T) {
			dir := t.TempDir()
			losses := func(epochs int, rundir string, resume bool) map[[2]int]float32 {
				ranks, _ := cpuGroup(t, 2)
				got := map[[2]int]float32{}
				ranks[0].Options.OnStep = func(e, s int, l float32) { got[[2]int{e, s}] = l }
				ranks[0].Options.RunDir, ranks[0].Options.Resume = rundir, resume
				c := cfg
				c.Epochs = epochs
				if err := runDeadline(t, groupDeadline, context.Background(), ds, c, ranks, replay, train.ReplayOptions{}); err != nil {
					t.Fatal(err)
				}
				return got
			}
			whole := losses(3, "", false)
			losses(2, dir, false)
			resumed := losses(3, dir, true)
			n := 0
			for k, l := range resumed {
				if k[0] != 2 {
					t.Fatalf("the resumed run trained step %v", k)
				}
				if l != whole[k] {
					t.Fatalf("epoch 3 step %d: loss %v resumed, %v uninterrupted", k[1], l, whole[k])
				}
				n++
			}
			if n == 0 {
				t.Fatal("the resumed run trained nothing")
			}
		})
	}
}

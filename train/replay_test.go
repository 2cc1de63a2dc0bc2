package train

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/nn"
)

// replayRun trains epochs with the replay driver on be and returns every
// step's loss, the final parameters and the driver's statistics.
func replayRun(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg Config, opt ReplayOptions) ([]float32, [][]float32, *ReplayStats) {
	t.Helper()
	var st *ReplayStats
	losses, params := lossesOf(t, be, ds, cfg, func(tr *Trainer) (err error) {
		_, st, err = tr.RunReplay(context.Background(), opt)
		return err
	})
	return losses, params, st
}

// eagerRun is replayRun with the eager driver.
func eagerRun(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg Config) ([]float32, [][]float32) {
	t.Helper()
	return lossesOf(t, be, ds, cfg, func(tr *Trainer) error {
		_, err := tr.Run(context.Background())
		return err
	})
}

// lossesOf trains cfg on be with the driver run and returns every step's
// loss and the final parameters.
func lossesOf(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg Config, run func(*Trainer) error) ([]float32, [][]float32) {
	t.Helper()
	var losses []float32
	tr, err := New(be, ds, cfg, Options{OnStep: func(_, _ int, l float32) { losses = append(losses, l) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := run(tr); err != nil {
		t.Fatal(err)
	}
	return losses, params(t, tr)
}

// sameRun fails the test unless a run's step losses and final parameters
// (got) are want's bit for bit; what names the case.
func sameRun(t *testing.T, what string, gotLoss, wantLoss []float32, gotParams, wantParams [][]float32) {
	t.Helper()
	if !slices.Equal(gotLoss, wantLoss) {
		t.Fatalf("%s: losses differ:\n%v\n%v", what, gotLoss, wantLoss)
	}
	if len(gotParams) != len(wantParams) {
		t.Fatalf("%s: %d parameter arrays, want %d", what, len(gotParams), len(wantParams))
	}
	for i := range wantParams {
		if !slices.Equal(gotParams[i], wantParams[i]) {
			t.Fatalf("%s: parameter array %d differs", what, i)
		}
	}
}

// runTrainer trains tr to the end with the replay or the eager driver.
func runTrainer(t *testing.T, tr *Trainer, replay bool) {
	t.Helper()
	var err error
	if replay {
		_, _, err = tr.RunReplay(context.Background(), ReplayOptions{})
	} else {
		_, err = tr.Run(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
}

func params(t *testing.T, tr *Trainer) [][]float32 {
	c, err := tr.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for _, d := range c.Data {
		out = append(out, d[0], d[1], d[2])
	}
	return out
}

func TestReplayReproducesEagerBitwise(t *testing.T) {
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn", "gin", "gat"} {
		cfg := tinyModel(t, model) // GAT's attention dropout drawn on the device's clock
		cfg.Epochs = 3
		if model == "gin" {
			cfg.GINEps = "learn"
		}
		st := replayMatchesEager(t, model, ds, cfg, 20)
		if st.Envelope.Bytes < st.Envelope.IdealBytes || st.Envelope.Bytes > 2*st.Envelope.IdealBytes {
			t.Errorf("%s: envelope %d bytes against ideal %d", model, st.Envelope.Bytes, st.Envelope.IdealBytes)
		}
	}
}

// replayMatchesEager trains cfg on ds with the eager driver and replayed
// (CPU backends, the replay's under the record wrapper) and fails the test
// unless the eager run took at least minSteps steps and the replay gave
// its every loss and parameter bit for bit, captured once, without an
// overflow, launched once a step; it returns the replay's statistics
// (what names the case).
func replayMatchesEager(t *testing.T, what string, ds *dataset.Dataset, cfg Config, minSteps int) *ReplayStats {
	t.Helper()
	st := replayMatchesEagerGrown(t, what, ds, cfg, minSteps)
	if st.Captures != 1 {
		t.Errorf("%s: %d captures, want one", what, st.Captures)
	}
	return st
}

// replayMatchesEagerGrown is replayMatchesEager where evaluation may grow
// the envelope (a typed run of few steps observes all of its training
// batches, and its validation batches may be larger): any number of
// captures, no training step overflowed.
func replayMatchesEagerGrown(t *testing.T, what string, ds *dataset.Dataset, cfg Config, minSteps int) *ReplayStats {
	t.Helper()
	wantLoss, wantParams := eagerRun(t, cpu.New(2), ds, cfg)
	gotLoss, gotParams, st := replayRun(t, record.New(cpu.New(2)), ds, cfg, ReplayOptions{})
	if len(wantLoss) < minSteps {
		t.Fatalf("%s: %d steps, want at least %d", what, len(wantLoss), minSteps)
	}
	sameRun(t, what+": replay against eager", gotLoss, wantLoss, gotParams, wantParams)
	if st.Overflows != 0 || st.Launches != len(wantLoss) {
		t.Errorf("%s: stats %+v, want no overflow, %d launches", what, st, len(wantLoss))
	}
	return st
}

// overflowCase is tiny for two epochs, its eager losses and parameters,
// and an envelope far below every batch: the first steps overflow, the
// envelope grows until the batches fit.
func overflowCase(t *testing.T) (*dataset.Dataset, Config, []float32, [][]float32, []nn.Caps) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 2
	wantLoss, wantParams := eagerRun(t, cpu.New(2), ds, cfg)
	small := []nn.Caps{{Dst: 300, Edges: 300, Src: 400}, {Dst: cfg.Batch, Edges: 200, Src: 300}}
	return ds, cfg, wantLoss, wantParams, small
}

func TestReplayOverflowRecoversExactly(t *testing.T) {
	ds, cfg, wantLoss, wantParams, small := overflowCase(t)
	gotLoss, gotParams, st := replayRun(t, record.New(cpu.New(2)), ds, cfg, ReplayOptions{Caps: small, Margin: 1.01})
	if st.Overflows == 0 || st.Captures < 2 {
		t.Fatalf("no overflow forced: %+v", st)
	}
	sameRun(t, fmt.Sprintf("replay after %d overflows against eager", st.Overflows), gotLoss, wantLoss, gotParams, wantParams)
	t.Logf("%d overflows, %d captures; final envelope %+v", st.Overflows, st.Captures, st.Envelope.Caps)
}

func TestReplayNeedsCapture(t *testing.T) {
	ds := tinyData(t)
	tr, err := New(cpu.New(1), ds, tinyConfig(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, _, err := tr.RunReplay(context.Background(), ReplayOptions{}); err != ErrNoCapture {
		t.Fatalf("got %v, want ErrNoCapture", err)
	}
}

func TestReplayEvaluationMatchesEager(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 3
	st := sameSummaries(t, ds, cfg)
	if st.EvalCaps < 2 {
		t.Fatalf("evaluation was not captured: %+v", st)
	}
}

// sameSummaries trains cfg eagerly on the CPU and with the replay driver
// through the recording wrapper, requires the same best validation and test
// accuracy, and returns the replay driver's statistics.
func sameSummaries(t *testing.T, ds *dataset.Dataset, cfg Config) *ReplayStats {
	t.Helper()
	run := func(be backend.Backend, replay bool) (*Summary, *ReplayStats) {
		tr, err := New(be, ds, cfg, Options{Mode: modeOf(replay)})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if replay {
			s, st, err := tr.RunReplay(context.Background(), ReplayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return s, st
		}
		s, err := tr.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s, nil
	}
	want, _ := run(cpu.New(2), false)
	got, st := run(record.New(cpu.New(2)), true)
	if got.BestValid[MetricAcc] != want.BestValid[MetricAcc] || got.Test[MetricAcc] != want.Test[MetricAcc] || got.BestEpoch != want.BestEpoch {
		t.Fatalf("replay: valid %v test %v at epoch %d; eager: valid %v test %v at epoch %d",
			got.BestValid[MetricAcc], got.Test[MetricAcc], got.BestEpoch, want.BestValid[MetricAcc], want.Test[MetricAcc], want.BestEpoch)
	}
	return st
}

// TestReplayEvaluationGrowsThePlan: with fewer training seeds than a batch
// (as Cora's 140 with batch 256), evaluation batches are larger than every
// training batch the envelope was sized from; evaluation overflows, runs
// eagerly, grows the shared plan, and later captures (evaluation and
// training) use the new plan. The results equal the eager run's.
func TestReplayEvaluationGrowsThePlan(t *testing.T) {
	full := tinyData(t)
	ds := *full
	ds.Train = full.Train[:100]
	cfg := tinyConfig(t)
	cfg.Epochs = 3
	want, _ := eagerRun(t, cpu.New(2), &ds, cfg)
	got, _, st := replayRun(t, record.New(cpu.New(2)), &ds, cfg, ReplayOptions{})
	if !slices.Equal(got, want) {
		t.Fatalf("losses differ:\n%v\n%v", got, want)
	}
	if st.Captures < 2 || st.EvalCaps < 3 {
		t.Fatalf("evaluation did not grow the plan and capture anew: %+v", st)
	}
	sameSummaries(t, &ds, cfg)
	t.Logf("%d training captures, %d evaluation captures", st.Captures, st.EvalCaps)
}

// An overflow found while the host runs ahead stops the launches within a
// window: every step launched after the overflowed one does its work and
// then runs again, so without the window's check one overflow early in a
// long epoch replayed the rest of the epoch twice.
func TestReplayOverflowStopsLaunchingWithinAWindow(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs, cfg.Batch = 1, 4
	steps := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
	if steps < 2*agreeWindow {
		t.Fatalf("%d steps per epoch: the case needs more than two windows", steps)
	}
	_, wantParams := eagerRun(t, cpu.New(2), ds, cfg)
	tr, err := New(record.New(cpu.New(2)), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	small := []nn.Caps{{Dst: 8, Edges: 8, Src: 10}, {Dst: cfg.Batch, Edges: 6, Src: 8}}
	_, st, err := tr.RunReplay(context.Background(), ReplayOptions{Caps: small, Margin: 1.01})
	if err != nil {
		t.Fatal(err)
	}
	if st.Overflows == 0 {
		t.Fatalf("no overflow forced: %+v", st)
	}
	if limit := steps + st.Overflows*agreeWindow; st.Launches > limit {
		t.Errorf("%d launches for %d steps and %d overflows: more than a window (%d) discarded per overflow", st.Launches, steps, st.Overflows, agreeWindow)
	}
	for i, p := range params(t, tr) {
		if !slices.Equal(p, wantParams[i]) {
			t.Fatalf("parameter array %d differs from eager after %d overflows", i, st.Overflows)
		}
	}
	t.Logf("%d steps, %d overflows, %d launches, %.1f ms growing", steps, st.Overflows, st.Launches, 1e3*st.GrowS)
}

// rowsLog is a resident store that notes the row buffers its gathers
// write until the first training step is done; remote makes it a
// featstore.Remote store, whose rows the replay driver fetches a step
// ahead.
type rowsLog struct {
	*featstore.Resident
	remote bool
	done   bool
	outs   []backend.Buffer
}

func (s *rowsLog) Remote() bool { return s.remote }

func (s *rowsLog) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	if !s.done && !slices.Contains(s.outs, out) {
		s.outs = append(s.outs, out)
	}
	s.Resident.Gather(ids, n, out)
}

// TestFetchAhead: a remote store's rows are gathered into the plan's rows
// and its twin's (which the step before fills), a resident store's into
// the plan's alone; either way replay equals eager, with the envelope
// observed and through forced overflows that re-run steps.
func TestFetchAhead(t *testing.T) {
	ds, cfg, want, wantParams, small := overflowCase(t)
	for _, remote := range []bool{false, true} {
		for _, caps := range [][]nn.Caps{nil, small} {
			be := record.New(cpu.New(2))
			res, err := featstore.Upload(be, ds.Features, ds.FeatDim)
			if err != nil {
				t.Fatal(err)
			}
			store := &rowsLog{Resident: res, remote: remote}
			var got []float32
			// GatherRows: a resident table would otherwise be read in place
			// (TestTableInput), and there would be no rows to fetch.
			tr, err := New(be, ds, cfg, Options{Features: store, GatherRows: true, OnStep: func(_, _ int, l float32) {
				got = append(got, l)
				store.done = true
			}})
			if err != nil {
				t.Fatal(err)
			}
			opt := ReplayOptions{}
			if caps != nil {
				opt = ReplayOptions{Caps: caps, Margin: 1.01}
			}
			_, st, err := tr.RunReplay(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			gotParams := params(t, tr)
			tr.Close()
			what := fmt.Sprintf("remote %t, forced overflows %t", remote, caps != nil)
			if caps != nil && st.Overflows == 0 {
				t.Fatalf("%s: no overflow", what)
			}
			sameRun(t, what+": against eager", got, want, gotParams, wantParams)
			wantOuts := 1
			if remote {
				wantOuts = 2
			}
			if caps == nil && len(store.outs) != wantOuts {
				t.Fatalf("%s: the first step's gathers wrote %d row buffers, want %d", what, len(store.outs), wantOuts)
			}
		}
	}
}

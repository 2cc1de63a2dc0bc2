package link

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// group is a run of n CPU devices joined in process (each under record,
// for the capturing modes) with the data-parallel driver: rank 0's
// figures and every rank's tensors.
type group struct {
	sum    *train.Summary
	epochs []train.EpochStats
	params [][][]float32
}

// runGroup trains cfg on ds over n CPU devices with the driver of mode;
// rank 0 gets opt (its run directory, resume).
func runGroup(t *testing.T, ds *dataset.Dataset, cfg train.Config, n int, mode train.Mode, opt train.Options) group {
	t.Helper()
	bes, comms := traintest.CPUGroup(t, n, true)
	colls := make([]backend.Collective, n)
	for i, c := range comms {
		colls[i] = c
	}
	return runRanks(t, ds, cfg, bes, colls, mode, opt)
}

// runRanks trains cfg on ds over the devices bes joined by comms.
func runRanks(t *testing.T, ds *dataset.Dataset, cfg train.Config, bes []backend.Backend, comms []backend.Collective, mode train.Mode, opt train.Options) group {
	t.Helper()
	var err error
	var g group
	g.params = make([][][]float32, len(bes))
	ranks := make([]multigpu.Rank, len(bes))
	for i := range ranks {
		o := train.Options{Task: Task{}} // rank 0 alone reads and writes the run directory
		if i == 0 {
			o = opt
			o.Task = Task{}
			o.OnEpoch = func(st train.EpochStats) { g.epochs = append(g.epochs, st) }
		}
		ranks[i] = multigpu.Rank{Backend: bes[i], Coll: comms[i], Options: o,
			Finished: func(tr *train.Trainer) error { g.params[i] = params(t, tr); return nil }}
	}
	if g.sum, err = multigpu.Run(t.Context(), ds, cfg, ranks, mode, train.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGroupMatchesOneDevice: two CPU devices in one process, each taking
// half of every step's edges and summing gradients, train as one device
// does: epoch losses within float32 rounding of the sums' order, and the
// ranks' weights bitwise equal after every run (eager and replayed).
func TestGroupMatchesOneDevice(t *testing.T) {
	ds := ringData(t, 400)
	cfg := ringConfig()
	// Each rank excludes its own share of a step's edges (as DGL's
	// data-parallel samplers do), which is not one device's exclusion of
	// all of them; without exclusion the group computes what one device
	// does.
	cfg.Epochs, cfg.Link.Exclude = 3, train.ExcludeNone
	one := trainLink(t, cpu.New(2), ds, cfg, train.Eager, train.Options{})
	for _, mode := range []train.Mode{train.Eager, train.Replay} {
		g := runGroup(t, ds, cfg, 2, mode, train.Options{})
		if len(g.epochs) != len(one.epochs) {
			t.Fatalf("%v: %d epochs, one device %d", mode, len(g.epochs), len(one.epochs))
		}
		for e := range g.epochs {
			a, b := g.epochs[e].Loss, one.epochs[e].Loss
			if math.Abs(a-b) > 1e-5*math.Abs(b) || g.epochs[e].TrainAcc != one.epochs[e].TrainAcc {
				t.Errorf("%v epoch %d: group loss %v acc %v, one device %v %v", mode, e+1, a, g.epochs[e].TrainAcc, b, one.epochs[e].TrainAcc)
			}
		}
		for i := range g.params[0] {
			if !slices.Equal(g.params[0][i], g.params[1][i]) {
				t.Fatalf("%v: tensor %d differs between the ranks", mode, i)
			}
		}
	}
}

// TestGroupResumeContinuesBitwise: a group of two devices saved after 2
// epochs and resumed to 4 (rank 0 from the run directory, which hands the
// others its state) gives the 4-epoch group run's losses and tensors bit for bit.
func TestGroupResumeContinuesBitwise(t *testing.T) {
	ds := ringData(t, 300)
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery = 4, 1
	straight := runGroup(t, ds, cfg, 2, train.Eager, train.Options{})
	dir := filepath.Join(t.TempDir(), "run")
	half := cfg
	half.Epochs = 2
	runGroup(t, ds, half, 2, train.Eager, train.Options{RunDir: dir})
	g := runGroup(t, ds, cfg, 2, train.Eager, train.Options{RunDir: dir, Resume: true})
	if g.sum.Epochs != 4 || len(g.epochs) != 2 || g.epochs[0].Epoch != 3 {
		t.Fatalf("%d epochs after the resume, %d trained by it; want 4, and epochs 3 and 4", g.sum.Epochs, len(g.epochs))
	}
	for e, st := range g.epochs {
		if want := straight.epochs[e+2].Loss; math.Float64bits(st.Loss) != math.Float64bits(want) {
			t.Errorf("epoch %d: loss %v, straight group run %v", st.Epoch, st.Loss, want)
		}
	}
	if g.sum.BestEpoch != straight.sum.BestEpoch || g.sum.Test[MetricAUC] != straight.sum.Test[MetricAUC] {
		t.Errorf("best epoch %d test %v, straight group run %d %v", g.sum.BestEpoch, g.sum.Test[MetricAUC], straight.sum.BestEpoch, straight.sum.Test[MetricAUC])
	}
	for i := range g.params[0] {
		if !slices.Equal(g.params[0][i], g.params[1][i]) || !slices.Equal(g.params[0][i], straight.params[0][i]) {
			t.Fatalf("tensor %d differs between the resumed ranks or from the straight run", i)
		}
	}
}

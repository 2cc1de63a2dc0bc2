package link

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
)

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
	cfg.Epochs, cfg.Exclude = 3, ExcludeNone
	one, _ := trainLink(t, cpu.New(2), ds, cfg, false)
	for _, replay := range []bool{false, true} {
		trs := cpuGroup(t, ds, cfg, 2, replay)
		s, err := RunGroup(t.Context(), trs, replay)
		if err != nil {
			t.Fatal(err)
		}
		for e := range s.Epochs {
			a, b := s.Epochs[e].Loss, one.Epochs[e].Loss
			if math.Abs(a-b) > 1e-5*math.Abs(b) || s.Epochs[e].TrainAcc != one.Epochs[e].TrainAcc {
				t.Errorf("replay %v epoch %d: group loss %v acc %v, one device %v %v", replay, e+1, a, s.Epochs[e].TrainAcc, b, one.Epochs[e].TrainAcc)
			}
		}
		p0, p1 := trs[0].params(), trs[1].params()
		for i := range p0 {
			if !slices.Equal(p0[i], p1[i]) {
				t.Fatalf("replay %v: tensor %d differs between the ranks", replay, i)
			}
		}
	}
	if _, err := NewShared(cpu.New(1), ds, func() Config { c := cfg; c.Batch = 63; return c }(), fakeGroup{}); err == nil {
		t.Error("a batch that does not split over the ranks was accepted")
	}
}

// fakeGroup is a collective of two ranks that is never called.
type fakeGroup struct{ backend.Collective }

func (fakeGroup) Size() int { return 2 }
func (fakeGroup) Rank() int { return 0 }

// cpuGroup makes a group of n CPU trainers joined in process (each CPU
// backend under record, for the replay driver, with replay).
func cpuGroup(t *testing.T, ds *dataset.Dataset, cfg Config, n int, replay bool) []*Trainer {
	bes := make([]backend.Backend, n)
	for i := range bes {
		bes[i] = cpu.New(1)
		if replay {
			bes[i] = record.New(bes[i])
		}
	}
	comms, err := inproc.New(bes)
	if err != nil {
		t.Fatal(err)
	}
	trs := make([]*Trainer, n)
	for i := range trs {
		if trs[i], err = NewShared(bes[i], ds, cfg, comms[i]); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { trs[i].Close() })
	}
	return trs
}

// TestGroupResumeContinuesBitwise: a group of two devices saved after 2
// epochs and resumed to 4, every rank from the run directory, gives the
// 4-epoch group run's losses and tensors bit for bit.
func TestGroupResumeContinuesBitwise(t *testing.T) {
	ds := ringData(t, 300)
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery = 4, 1
	straight, err := RunGroup(t.Context(), cpuGroup(t, ds, cfg, 2, false), false)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	half := cfg
	half.Epochs = 2
	first := cpuGroup(t, ds, half, 2, false)
	first[0].RunDir = dir
	if _, err := RunGroup(t.Context(), first, false); err != nil {
		t.Fatal(err)
	}
	trs := cpuGroup(t, ds, cfg, 2, false)
	for _, tr := range trs {
		tr.RunDir = dir
		if err := tr.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	var trained []int
	trs[0].OnEpoch = func(st EpochStats) { trained = append(trained, st.Epoch) }
	s, err := RunGroup(t.Context(), trs, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Epochs) != 4 || !slices.Equal(trained, []int{3, 4}) {
		t.Fatalf("%d epochs after the resume, epochs %v trained by it; want 4, and 3 and 4", len(s.Epochs), trained)
	}
	for e := range s.Epochs {
		if math.Float64bits(s.Epochs[e].Loss) != math.Float64bits(straight.Epochs[e].Loss) {
			t.Errorf("epoch %d: loss %v, straight group run %v", e+1, s.Epochs[e].Loss, straight.Epochs[e].Loss)
		}
	}
	if s.BestEpoch != straight.BestEpoch || s.Test.AUC != straight.Test.AUC {
		t.Errorf("best epoch %d test %v, straight group run %d %v", s.BestEpoch, s.Test.AUC, straight.BestEpoch, straight.Test.AUC)
	}
	p0, p1 := trs[0].params(), trs[1].params()
	for i := range p0 {
		if !slices.Equal(p0[i], p1[i]) {
			t.Fatalf("tensor %d differs between the resumed ranks", i)
		}
	}
}

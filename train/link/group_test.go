package link

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/backend/record"
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
		bes := make([]backend.Backend, 2)
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
		trs := make([]*Trainer, len(bes))
		for i := range trs {
			if trs[i], err = NewShared(bes[i], ds, cfg, comms[i]); err != nil {
				t.Fatal(err)
			}
			defer trs[i].Close()
		}
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

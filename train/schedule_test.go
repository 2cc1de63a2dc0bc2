package train

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestLRFactor: the cosine schedule starts at the learning rate, falls
// strictly epoch by epoch and ends near zero; constant is 1 throughout.
func TestLRFactor(t *testing.T) {
	const n = 10
	prev := float32(2)
	for e := range n {
		f := LRFactor(ScheduleCosine, e, n)
		if e == 0 && f != 1 {
			t.Errorf("cosine epoch 0: factor %g, want 1", f)
		}
		if !(f < prev && f > 0) {
			t.Errorf("cosine epoch %d: factor %g after %g, want it in (0, %g)", e, f, prev, prev)
		}
		prev = f
		if c := LRFactor(ScheduleConstant, e, n); c != 1 {
			t.Errorf("constant epoch %d: factor %g, want 1", e, c)
		}
	}
	if prev > 0.03 {
		t.Errorf("cosine's last epoch of %d: factor %g, want below 0.03", n, prev)
	}
}

// TestCosineSchedule: the cosine schedule trains its first epoch as the
// constant rate does, bit for bit, and every later epoch differently
// (the factor reaches Adam), and the replay driver, whose captured step
// reads the factor from backend memory, reproduces the eager run bit for
// bit across the epochs' changes.
func TestCosineSchedule(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyModel(t, "sage")
	cfg.Epochs = 3
	cfg.LRSchedule = ScheduleConstant
	flat, _ := eagerRun(t, cpu.New(2), ds, cfg)
	cfg.LRSchedule = ScheduleCosine
	cos, _ := eagerRun(t, cpu.New(2), ds, cfg)
	steps := len(flat) / cfg.Epochs
	if len(cos) != len(flat) || steps < 2 {
		t.Fatalf("%d and %d losses over %d epochs", len(cos), len(flat), cfg.Epochs)
	}
	if !slices.Equal(cos[:steps], flat[:steps]) {
		t.Errorf("the first epoch's losses differ from the constant rate's")
	}
	// The first step of epoch 2 ran before any update at the new rate.
	if slices.Equal(cos[steps+1:2*steps], flat[steps+1:2*steps]) {
		t.Errorf("the second epoch's losses equal the constant rate's: the factor did not reach Adam")
	}
	replayMatchesEager(t, "cosine", ds, cfg, 20)
}

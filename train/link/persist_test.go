package link

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
)

// TestResumeContinuesBitwise: a run saved after 2 epochs and resumed to 4
// gives the 4-epoch run's losses, metrics and tensors bit for bit; other
// settings are refused.
func TestResumeContinuesBitwise(t *testing.T) {
	ds := ringData(t, 300)
	cfg := ringConfig()
	cfg.Epochs, cfg.EvalEvery = 4, 1
	straight, want := trainLink(t, cpu.New(2), ds, cfg, false)

	dir := filepath.Join(t.TempDir(), "run")
	half := cfg
	half.Epochs = 2
	first, err := New(cpu.New(2), ds, half)
	if err != nil {
		t.Fatal(err)
	}
	first.RunDir = dir
	if _, err := first.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	first.Close()

	tr, err := New(record.New(cpu.New(2)), ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.RunDir = dir
	if err := tr.Resume(); err != nil {
		t.Fatal(err)
	}
	s, err := tr.RunReplay(t.Context()) // the driver may change across a resume
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Epochs) != 4 {
		t.Fatalf("%d epochs after the resume, want 4", len(s.Epochs))
	}
	for e := range s.Epochs {
		if math.Float64bits(s.Epochs[e].Loss) != math.Float64bits(straight.Epochs[e].Loss) {
			t.Errorf("epoch %d: loss %v, straight run %v", e+1, s.Epochs[e].Loss, straight.Epochs[e].Loss)
		}
	}
	if s.BestEpoch != straight.BestEpoch || s.Test.AUC != straight.Test.AUC {
		t.Errorf("best epoch %d test %v, straight run %d %v", s.BestEpoch, s.Test.AUC, straight.BestEpoch, straight.Test.AUC)
	}
	for i, p := range tr.params() {
		if !slices.Equal(p, want[i]) {
			t.Fatalf("tensor %d differs from the straight run's", i)
		}
	}

	other := cfg
	other.Negatives = 3
	tr2, err := New(cpu.New(1), ds, other)
	if err != nil {
		t.Fatal(err)
	}
	defer tr2.Close()
	tr2.RunDir = dir
	if err := tr2.Resume(); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("resume with other negatives: %v", err)
	}
}

package hot

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/train"
)

// TestNeedsHotRows: hot vertices on a backend without the hot-row ops fail
// when they are set up, before anything is ranked or allocated, naming the
// backend and the capability.
func TestNeedsHotRows(t *testing.T) {
	be := struct{ backend.Backend }{cpu.New(1)} // the required core only
	_, err := New(nil, be, nil, train.Config{}, Options{Ratio: 0.1}, nil)
	if err == nil {
		t.Fatal("hot vertices were set up on a backend without the hot-row ops")
	}
	for _, want := range []string{be.Name(), "backend.HotRows"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// TestNeedsNewCPU: the rows are computed on a CPU backend the caller
// makes; without Options.NewCPU the setup fails saying so (the package
// builds no backend itself).
func TestNeedsNewCPU(t *testing.T) {
	cfg := train.Config{Fanouts: []int{3, 2}}
	_, err := New(nil, cpu.New(1), nil, cfg, Options{Ratio: 0.1, SuperBatch: 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "Options.NewCPU") {
		t.Fatalf("without NewCPU: %v", err)
	}
}

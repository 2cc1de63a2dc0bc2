package hybrid

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// TestHotPipelineIsTheReference: the pipelined schedule (the CPU computes
// super-batch g+1's rows on a worker while g trains) gives bitwise the run
// of the sequential reference schedule, and a second run the same again,
// for staleness 1 and 2, with the rows as aggregated inputs and as outputs;
// the rows were computed once per super-batch, and (outputs) the gradient
// share of every super-batch but the last.
func TestHotPipelineIsTheReference(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Epochs = 2
	for _, outputs := range []bool{false, true} {
		for _, k := range []int{1, 2} {
			opt := HotOptions{Ratio: 0.1, Staleness: k, SuperBatch: 5, Outputs: outputs}
			opt.Sequential = true
			ref, rst := hybridRun(t, ds, cfg, 3000, 0, opt)
			opt.Sequential = false
			for run := range 2 {
				got, st := hybridRun(t, ds, cfg, 3000, 0, opt)
				if !slices.Equal(got, ref) {
					t.Fatalf("outputs %t, staleness %d, run %d: the pipelined losses differ from the sequential schedule's", outputs, k, run)
				}
				if st.Hot.SuperBatches != rst.Hot.SuperBatches {
					t.Errorf("staleness %d: %d super-batches computed, the reference %d", k, st.Hot.SuperBatches, rst.Hot.SuperBatches)
				}
			}
			steps := (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
			perEp := (steps + 4) / 5
			want, wantGrads := cfg.Epochs*perEp, 0
			if outputs {
				wantGrads = want - 1
			}
			if rst.Hot.SuperBatches != want || rst.Hot.Gradients != wantGrads || rst.Hot.Inputs == outputs {
				t.Errorf("outputs %t, staleness %d: rows of %d super-batches and %d gradient shares computed (inputs %t), want %d and %d (each super-batch's, none past the last; with outputs a gradient for every super-batch but the last)",
					outputs, k, rst.Hot.SuperBatches, rst.Hot.Gradients, rst.Hot.Inputs, want, wantGrads)
			}
			if rst.Hot.Vertices != int(math.Ceil(0.1*float64(ds.Graph.NumNodes))) {
				t.Errorf("%d hot vertices, want 10%% of %d", rst.Hot.Vertices, ds.Graph.NumNodes)
			}
		}
	}
}

// replayLosses is every step's loss of cfg's plain replay run (on the
// CPU, the record backend standing for a GPU).
func replayLosses(t *testing.T, ds *dataset.Dataset, cfg train.Config) []float32 {
	t.Helper()
	return replayOn(t, record.New(cpu.New(2)), ds, cfg)
}

// replayOn is replayLosses on be.
func replayOn(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg train.Config) []float32 {
	t.Helper()
	var want []float32
	tr, err := train.New(be, ds, cfg, train.Options{Mode: train.Replay, OnStep: func(_, _ int, l float32) { want = append(want, l) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, _, err := tr.RunReplay(context.Background(), train.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestHotInputsAreTheStep: with the rows as aggregated inputs and one step
// per super-batch, the CPU samples each hot vertex's neighbours with the
// step's own key, and the GPU multiplies the rows by the weights of the
// moment, so the run is the plain replay run bitwise at every step, for
// staleness 0 and 1 alike (the rows need no weights; GraphSAGE keeps the
// neighbour term apart from the self term, so the sums are the same). With
// five steps per super-batch the hot neighbourhoods are drawn once per
// super-batch: the run differs, and trains as well.
func TestHotInputsAreTheStep(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Epochs = 3
	cfg.InDropout = 0 // the CPU's rows see no input dropout
	want := replayLosses(t, ds, cfg)
	for _, k := range []int{0, 1} {
		got, st := hybridRun(t, ds, cfg, 3000, 0, HotOptions{Ratio: 0.2, Staleness: k, SuperBatch: 1})
		if !st.Hot.Inputs {
			t.Fatal("GraphSAGE's hot rows are not inputs")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("staleness %d: the losses differ from replay's:\n%v\n%v", k, got, want)
		}
	}
	got, _ := hybridRun(t, ds, cfg, 3000, 0, HotOptions{Ratio: 0.2, Staleness: 1, SuperBatch: 5})
	if slices.Equal(got, want) {
		t.Fatal("five steps per super-batch: every loss equals replay's; the hot neighbourhoods were not shared")
	}
	last := func(l []float32) float64 { return float64(l[len(l)-1]) }
	if d := math.Abs(last(got)-last(want)) / last(want); !(d <= 0.1) {
		t.Errorf("five steps per super-batch: last loss %v, replay %v", last(got), last(want))
	}
}

// TestHotFreshRowsEqualTheStep: with the rows as outputs, one step per
// super-batch and staleness 0, the CPU's rows are computed with the step's own weights and
// sampled with the step's own key, so the first forward pass (and its
// loss) is the one without hot vertices: the masking, the CPU's rows and
// their replacement add up to the same batch. Later steps differ, since
// the hot rows pass no gradient to the bottom layer's weights, but train
// about as well.
func TestHotFreshRowsEqualTheStep(t *testing.T) {
	ds, cfg := tiny(t)
	cfg.Epochs = 3
	cfg.InDropout = 0 // the CPU's rows see no input dropout
	want := replayLosses(t, ds, cfg)
	got, st := hybridRun(t, ds, cfg, 3000, 0, HotOptions{Ratio: 0.2, Staleness: 0, SuperBatch: 1, Outputs: true})
	if len(got) != len(want) {
		t.Fatalf("%d steps, replay %d", len(got), len(want))
	}
	if d := math.Abs(float64(got[0]-want[0])) / float64(want[0]); !(d <= 1e-6) {
		t.Errorf("first step: loss %v with hot rows, %v without (relative %.2g)", got[0], want[0], d)
	}
	if slices.Equal(got, want) {
		t.Error("every loss equals the run without hot vertices: the hot rows changed nothing")
	}
	t.Logf("first loss %v (without hot rows %v); last %v (%v); %d hot vertices, CPU %.3f s", got[0], want[0], got[len(got)-1], want[len(want)-1], st.Hot.Vertices, st.Hot.CPUSeconds)
}

package simulate

import (
	"math"
	"testing"
)

// productsSim is the products-sim job on n devices of one host with the
// whole graph on each (as measured), the imbalance simulate finds there.
func productsSim(n, perDevice int) Figures {
	return Figures{Hosts: 1, Devices: n, PerDevice: perDevice, TrainSeeds: 196_615, Imbalance: 1.01}
}

// TestModelCalibration: the model reproduces the measurements on two H100s
// (products-sim, whole graph on each GPU): one GPU's epoch (0.0841 s), two
// GPUs at 1024 seeds per device (1.78x) and at a global batch of 1024
// (1.20x), each within 10%.
func TestModelCalibration(t *testing.T) {
	m := &Model{Step: H100ProductsSim(), Links: DefaultLinks(), ParamBytes: ParamBytes(100, 256, 47, 3)}
	one, err := m.OneGPU(196_615, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(one.EpochS-0.0841) > 0.01*0.0841 || one.Steps != 193 {
		t.Errorf("one GPU: %d steps, %.4f s, want 193 and 0.0841 s", one.Steps, one.EpochS)
	}
	for _, c := range []struct {
		perDevice int
		want      float64
	}{{1024, 1.78}, {512, 1.20}} {
		p, err := m.Predict(productsSim(2, c.perDevice))
		if err != nil {
			t.Fatal(err)
		}
		got := one.EpochS / p.EpochS
		t.Logf("2 GPUs at %d seeds each: %.2fx (measured %.2fx); step %.3f ms: compute %.3f, imbalance %.3f, all-reduce %.3f",
			c.perDevice, got, c.want, p.StepMs, p.Compute, p.Imbalance, p.AllReduce)
		if math.Abs(got-c.want) > 0.1*c.want {
			t.Errorf("2 GPUs at %d seeds each: %.2fx, measured %.2fx", c.perDevice, got, c.want)
		}
	}
}

// TestStepTimes: the table is read at its points, between them and below
// them down to the step's fixed cost; a scaled table keeps its shape.
func TestStepTimes(t *testing.T) {
	s := H100ProductsSim()
	for _, c := range []struct{ b, ms float64 }{{1024, 0.436}, {768, 0.3725}, {4096, 0.982}, {0, 0.151}} {
		if got := s.At(c.b); math.Abs(got-c.ms) > 1e-9 {
			t.Errorf("At(%v) = %v, want %v", c.b, got, c.ms)
		}
	}
	if got := s.Scaled(512, 0.618).At(512); math.Abs(got-0.618) > 1e-12 {
		t.Errorf("scaled: %v at 512", got)
	}
	if ParamBytes(100, 256, 47, 3) != 4*206_895 {
		t.Errorf("ParamBytes = %d", ParamBytes(100, 256, 47, 3))
	}
}

// TestReplayChunks: the chunks hold the most rows an observed batch after
// the first asks of a peer, times the margin; the first step's larger ask
// (no batch kept rows before it) grows nothing, a later one grows them.
func TestReplayChunks(t *testing.T) {
	res := &Result{Config: Config{Hosts: 1, Devices: 2, Margin: 1.05}, EpochSteps: 3}
	for _, need := range []int{100, 50, 40, 60, 70} {
		res.Steps = append(res.Steps, Step{Ranks: []RankStep{{Need: need}, {Need: need / 2}}})
	}
	replayChunks(res)
	var got []int
	for _, st := range res.Steps {
		got = append(got, st.Chunk*10+st.Gathers)
	}
	want := []int{531, 531, 531, 632, 742} // 50 observed: 53; 60 asked: 63, two gathers; 70: 74
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("chunk*10+gathers %v, want %v", got, want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/train/multigpu/simulate"
)

// typedSimulation is fanout simulate's JSON for a typed graph.
type typedSimulation struct {
	Simulation  simulate.TypedResult
	Model       simulate.TypedModel
	Memory      simulate.Memory
	Job         simulate.Prediction
	Predictions []simulate.Prediction
}

// TestSimulateTypedPreset: simulate on igbh-sim at 1/2000 of IGB-H medium
// gives every rank's step with each layer's sources per type and edges
// per relation (the top layer's paper sources at least the rank's seeds,
// every relation's edges summing to the step's), the R-GAT's gradients,
// a device's memory (every table, every list) within --gpu-memory, and
// the ladder's predictions; the text names the types and relations.
func TestSimulateTypedPreset(t *testing.T) {
	var out, errs bytes.Buffer
	args := []string{"--preset", "igbh-sim", "--scale", "0.0005", "--steps", "2", "--batch", "128", "--fanouts", "5,3", "--hidden", "32", "--json"}
	if err := runSimulate(context.Background(), args, &out, &errs); err != nil {
		t.Fatalf("%v: %s", err, errs.String())
	}
	var got typedSimulation
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	s := got.Simulation
	if len(s.Types) != 6 || len(s.Relations) != 11 || len(s.Steps) != 2 || len(s.Steps[0].Ranks) != 2 {
		t.Fatalf("%d types, %d relations, steps %+v", len(s.Types), len(s.Relations), s.Steps)
	}
	for _, st := range s.Steps {
		for _, rs := range st.Ranks {
			var edges int64
			for _, e := range rs.RelEdges() {
				edges += e
			}
			top := rs.Layers[len(rs.Layers)-1]
			if rs.Seeds != 128 || len(rs.Layers) != 2 || top.Src[s.Target] <= 128 || edges != rs.Edges || rs.RowBytes != 4*1024*sum(rs.Layers[0].Src) {
				t.Errorf("rank step %+v", rs)
			}
		}
	}
	m := got.Memory
	if got.Model.ParamBytes == 0 || got.Model.StepMs != 38.42 || got.Model.RefBatch != 1024 || got.Model.RefEdges == 0 {
		t.Errorf("model %+v", got.Model)
	}
	if m.Features != 13013*4096 || m.Lists == 0 || m.Model != 4*got.Model.ParamBytes || m.Step == 0 || !m.Fits {
		t.Errorf("memory %+v", m)
	}
	if len(got.Predictions) != 7 || got.Predictions[0].Speedup != 1 || got.Job.AllReduce <= 0 || got.Job.NVLink != 0 {
		t.Errorf("job %+v, predictions %+v", got.Job, got.Predictions)
	}
	out.Reset()
	args = append(args[:len(args)-1], "--gpu-memory", "10MiB", "--model", "rsage", "--predict=false")
	if err := runSimulate(context.Background(), args, &out, &errs); err != nil {
		t.Fatalf("%v: %s", err, errs.String())
	}
	for _, want := range []string{"paper:written_by:author", "conference:rev_venue:paper", "  institute  ", "26.610 ms at 1024 seeds", "does NOT fit", "  largest  "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

func sum(v []int64) int64 {
	var n int64
	for _, x := range v {
		n += x
	}
	return n
}

// TestSimulateTypedData: simulate reads a generated typed dataset: one
// with a type without features (hetero-tiny's authors) simulates on one
// device, and is refused on several, naming --devices and the type.
func TestSimulateTypedData(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ht")
	if code, stdout, stderr := fanout(t, "gen", "hetero-tiny", "--out", data); code != 0 {
		t.Fatalf("gen: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := fanout(t, "simulate", "--data", data, "--devices", "1", "--predict=false", "--steps", "2")
	if code != 0 || !strings.Contains(stdout, "hetero-tiny: 4 vertex types") || !strings.Contains(stdout, "memory per device") {
		t.Fatalf("simulate: exit %d\n%s%s", code, stdout, stderr)
	}
	oneLineError(t, "devices: hetero-tiny's type author has no features", "simulate", "--data", data, "--devices", "2", "--steps", "2")
}

// TestSimulateTypedRefusals: the flags of a placement, of one-type step
// times and of a model that is not typed are refused in one line naming
// the flag.
func TestSimulateTypedRefusals(t *testing.T) {
	base := []string{"simulate", "--preset", "igbh-sim", "--scale", "0.0005", "--steps", "1", "--predict=false"}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"shard-features: on, but a typed graph trains with every relation and feature table on every device", []string{"--shard-features", "on"}},
		{"shard-features: hosts", []string{"--shard-features", "hosts"}},
		{"replicate: 0.1, but a typed graph", []string{"--replicate", "0.1"}},
		{"no-feature-reuse: set", []string{"--no-feature-reuse"}},
		{"chunks: eager", []string{"--chunks", "eager"}},
		{"step-times: a one-type step's table", []string{"--step-times", "512:1,1024:2"}},
		{"model: sage is not a typed graphs' model", []string{"--model", "sage"}},
		{"step-ms: required for model rgcn", []string{"--model", "rgcn"}},
		{"scale: 1.5, want a share of the preset's counts in (0, 1]", []string{"--scale", "1.5"}},
		{"scale: -1, want a share", []string{"--scale", "-1"}},
		{"heads: -2, want 0", []string{"--heads", "-2"}},
	} {
		oneLineError(t, c.want, append(base, c.args...)...)
	}
	oneLineError(t, "model: tiny has one vertex type", "simulate", "--model", "rsage", "--steps", "1")
	oneLineError(t, "scale: preset tiny: scale 0.5: an R-MAT preset has a fixed size", "simulate", "--scale", "0.5", "--steps", "1")
}

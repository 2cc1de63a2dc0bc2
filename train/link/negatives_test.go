package link

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// sharedConfig is ringConfig with a step's k negatives shared by every
// positive (drawn uniformly or by degree).
func sharedConfig(k int, dist string) train.Config {
	c := ringConfig()
	c.Link.Negatives, c.Link.NegativeSharing, c.Link.NegativeDist = k, train.ShareBatch, dist
	return c
}

// inBatchConfig is ringConfig with the other positives' destinations as
// negatives.
func inBatchConfig(k int) train.Config {
	c := ringConfig()
	c.Link.Negatives, c.Link.NegativeDist = k, train.DistInBatch
	return c
}

// stepView is what a step's plan holds after its forward pass and loss:
// its b positives, their ends as laid out, each end's output row, the
// model's output and the loss.
type stepView struct {
	b          int
	ends, rows []int32
	out        []float32
	loss       float64
}

// viewStep issues step s of tr's plan up to the loss and reads it back.
func viewStep(t *testing.T, tr *train.Trainer, s int) stepView {
	t.Helper()
	p := stepPlan(t, tr, s)
	_, out, loss := stepLoss(tr, p)
	bt := p.Task.(*batch)
	h := bt.h
	be := tr.Backend()
	counts := make([]int32, numCounts)
	be.Read(counts, bt.positives.Buf, 0)
	v := stepView{b: int(counts[countPositives])}
	v.ends, v.rows = make([]int32, counts[countEnds]), make([]int32, counts[countEnds])
	be.Read(v.ends, bt.ends, 0)
	be.Read(v.rows, bt.rows, 0)
	v.out = make([]float32, out.Len())
	be.Read(v.out, out, 0)
	l := make([]float32, 1)
	be.Read(l, loss, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	v.loss = float64(l[0])
	if got, want := int(counts[countEnds]), backend.LinkEnds(v.b, h.k, h.layout); got != want || v.b != tr.StepItems() {
		t.Fatalf("%d ends of %d positives, want %d of %d", got, v.b, want, tr.StepItems())
	}
	return v
}

// directLoss is the dot decoder's mean binary cross-entropy of the step's
// pairs, each positive i against the ends negative(i, j) gives, computed
// here in float64 from the model's output rows.
func (v stepView) directLoss(dim, k int, negative func(i, j int) int) float64 {
	score := func(a, c int) float64 {
		var s float64
		for d := range dim {
			s += float64(v.out[int(v.rows[a])*dim+d]) * float64(v.out[int(v.rows[c])*dim+d])
		}
		return s
	}
	bce := func(s, y float64) float64 { return max(s, 0) - s*y + math.Log1p(math.Exp(-math.Abs(s))) }
	var sum float64
	for i := range v.b {
		sum += bce(score(i, v.b+i), 1)
		for j := range k {
			sum += bce(score(i, negative(i, j)), 0)
		}
	}
	return sum / float64(v.b*(1+k))
}

// TestSharedNegatives: with --negative-sharing batch a step draws k
// distinct vertices once (by degree: of some degree; uniformly: also the
// reference's draw for the step's key, and different draws at another
// step), lays them out after the positives' ends, and every positive's
// loss is against all of them: the loss is the direct computation's.
func TestSharedNegatives(t *testing.T) {
	ds := ringData(t, 400)
	for _, dist := range []string{train.DistUniform, train.DistDegree} {
		const k = 100
		cfg := sharedConfig(k, dist)
		cfg.Link.Decoder, cfg.Link.DecoderWidth, cfg.Dropout = train.DecoderDot, 0, 0
		tr := newTrainer(t, cpu.New(2), ds, cfg, train.Options{})
		v := viewStep(t, tr, 1)
		drawn := v.ends[2*v.b:]
		if len(drawn) != k || len(slices.Compact(slices.Sorted(slices.Values(drawn)))) != k {
			t.Fatalf("%s: shared negatives %v: want %d distinct", dist, drawn, k)
		}
		for _, w := range drawn {
			if ds.Graph.Degree(int64(w)) == 0 && dist == train.DistDegree {
				t.Errorf("%s: vertex %d of degree 0 drawn", dist, w)
			}
		}
		if dist == train.DistUniform {
			want := make([]int32, k)
			sample.SharedNegatives(rng.Key{Seed: cfg.Seed, Step: 1, Stream: negativeStream}, backend.SharedIndex, 400, nil, 0, want)
			if !slices.Equal(drawn, want) {
				t.Errorf("shared negatives %v, want the step's draw %v", drawn, want)
			}
			if other := viewStep(t, tr, 2).ends; slices.Equal(other[len(other)-k:], drawn) {
				t.Error("steps 1 and 2 drew the same negatives")
			}
		}
		want := v.directLoss(cfg.Link.Embed, k, func(_, j int) int { return 2*v.b + j })
		if !(math.Abs(v.loss-want) <= 1e-5*want) {
			t.Errorf("%s: loss %v, direct %v", dist, v.loss, want)
		}
	}
}

// TestInBatchNegatives: with --negative-dist in-batch a step lays out
// only its positives' ends, and positive i's negatives are exactly the
// other positives' destinations (k = b-1: each of them once, in the order
// i+1, i+2, ...): the loss is the direct computation's.
func TestInBatchNegatives(t *testing.T) {
	cfg := inBatchConfig(63)
	cfg.Link.Decoder, cfg.Link.DecoderWidth, cfg.Dropout = train.DecoderDot, 0, 0
	tr := newTrainer(t, cpu.New(2), ringData(t, 400), cfg, train.Options{})
	v := viewStep(t, tr, 1)
	if len(v.ends) != 2*v.b || v.b != 64 {
		t.Fatalf("%d ends of %d positives, want only theirs", len(v.ends), v.b)
	}
	want := v.directLoss(cfg.Link.Embed, 63, func(i, j int) int { return v.b + (i+1+j)%v.b })
	if !(math.Abs(v.loss-want) <= 1e-5*want) {
		t.Errorf("loss %v, direct %v", v.loss, want)
	}
}

// TestNegativesReplayEqualsEager: shared and in-batch negatives (the
// last step of an epoch shorter than k+1 positives, whose in-batch
// negatives cycle over the others) replay the eager run bit for bit, on
// the CPU under the record wrapper, and learn.
func TestNegativesReplayEqualsEager(t *testing.T) {
	ds := ringData(t, 400)
	for _, cfg := range []train.Config{sharedConfig(100, train.DistDegree), inBatchConfig(40)} {
		name := fmt.Sprintf("%s/%s", cfg.Link.NegativeDist, cfg.Link.NegativeSharing)
		eager := trainLink(t, record.New(cpu.New(2)), ds, cfg, train.Eager, train.Options{})
		replayed := trainLink(t, record.New(cpu.New(2)), ds, cfg, train.Replay, train.Options{})
		if !slices.Equal(eager.steps, replayed.steps) || len(eager.steps) == 0 {
			t.Errorf("%s: step losses differ between eager and replay:\n%v\n%v", name, eager.steps, replayed.steps)
		}
		for i := range eager.params {
			if !slices.Equal(eager.params[i], replayed.params[i]) {
				t.Fatalf("%s: parameter %d differs between eager and replay", name, i)
			}
		}
		if eager.epochs[0].Loss == eager.epochs[1].Loss || eager.sum.Test[MetricMRR] != replayed.sum.Test[MetricMRR] {
			t.Errorf("%s: epoch losses %v, %v; test MRR eager %v, replayed %v", name, eager.epochs[0].Loss, eager.epochs[1].Loss,
				eager.sum.Test[MetricMRR], replayed.sum.Test[MetricMRR])
		}
	}
	if n := len(ds.Link.Train) / 2 % 64; n == 0 || n > 40 {
		t.Fatalf("the epoch's last step has %d edges: want a short one, below 41", n)
	}
}

// TestNegativesRefused: negatives a step cannot form are refused before
// training, naming the setting: in batch more than a step's other
// positives, in batch and shared at once, an unknown sharing, more
// shared negatives than vertices.
func TestNegativesRefused(t *testing.T) {
	for _, c := range []struct {
		cfg  train.Config
		want string
	}{
		{inBatchConfig(64), "link.negatives: 64 in-batch negatives, but a step of 64 edges has 63 other destinations"},
		{func() train.Config { c := inBatchConfig(3); c.Link.NegativeSharing = train.ShareBatch; return c }(), "link.negative_sharing: batch, but in-batch"},
		{func() train.Config { c := ringConfig(); c.Link.NegativeSharing = "all"; return c }(), `link.negative_sharing: "all", want none or batch`},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg.Link, err, c.want)
		}
	}
	_, err := train.New(cpu.New(1), ringData(t, 60), sharedConfig(61, train.DistUniform), train.Options{Task: Task{}})
	if err == nil || !strings.Contains(err.Error(), "--negatives 61 shared negatives are distinct vertices, but ring has 60") {
		t.Errorf("61 shared negatives of 60 vertices: %v", err)
	}
}

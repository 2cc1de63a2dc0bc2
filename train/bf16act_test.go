package train

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
)

// TestBF16Activations: GraphSAGE with bfloat16 hidden activations replays
// its eager run bit for bit, and trains as float32 activations do (the
// losses of 2 tiny epochs within 1%), while a
// GCN model, whose layers read float32, is unchanged by the setting.
func TestBF16Activations(t *testing.T) {
	ds := tinyData(t)
	for _, model := range []string{"sage", "gcn"} {
		cfg := tinyModel(t, model)
		cfg.Epochs = 2
		same, worst := againstFloat32(t, ds, cfg, func(c *Config) { c.Activations = "bfloat16" })
		if model != "sage" {
			if !same {
				t.Errorf("%s: bfloat16 activations changed a model whose layers read float32", model)
			}
			continue
		}
		if same {
			t.Fatalf("%s: bfloat16 activations changed nothing", model)
		}
		t.Logf("%s: largest relative loss difference %.2g", model, worst)
	}
}

// againstFloat32 trains cfg on the CPU eagerly, then with set applied
// eagerly and replayed. The replay must equal the eager run bit for bit,
// and unless the setting changed nothing (same), its losses must stay
// within 1% of the first run's (worst: the largest relative difference).
func againstFloat32(t *testing.T, ds *dataset.Dataset, cfg Config, set func(*Config)) (same bool, worst float64) {
	t.Helper()
	f32Loss, f32Params := eagerRun(t, cpu.New(2), ds, cfg)
	set(&cfg)
	loss, params := eagerRun(t, cpu.New(2), ds, cfg)
	rLoss, rParams, _ := replayRun(t, record.New(cpu.New(2)), ds, cfg, ReplayOptions{})
	sameRun(t, cfg.Model+": replay against eager", rLoss, loss, rParams, params)
	if slices.Equal(loss, f32Loss) && slices.EqualFunc(params, f32Params, slices.Equal) {
		return true, 0
	}
	for i := range loss {
		worst = max(worst, math.Abs(float64(loss[i]-f32Loss[i]))/float64(f32Loss[i]))
	}
	last := len(loss) - 1
	if d := math.Abs(float64(loss[last]-f32Loss[last])) / float64(f32Loss[last]); !(worst <= 0.01 && d <= 0.01) {
		t.Errorf("%s: losses %.3g apart at worst, %.3g at the end, from float32's", cfg.Model, worst, d)
	}
	return false, worst
}

package train

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
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
		f32Loss, f32Params := eagerRun(t, cpu.New(2), ds, cfg)
		cfg.Activations = "bfloat16"
		loss, params := eagerRun(t, cpu.New(2), ds, cfg)
		rLoss, rParams, _ := replayRun(t, record.New(cpu.New(2)), ds, cfg, ReplayOptions{})
		if !slices.Equal(rLoss, loss) {
			t.Fatalf("%s: replay differs from eager with bfloat16 activations", model)
		}
		for i := range params {
			if !slices.Equal(rParams[i], params[i]) {
				t.Fatalf("%s: replayed parameter array %d differs from eager", model, i)
			}
		}
		same := slices.Equal(loss, f32Loss) && slices.EqualFunc(params, f32Params, slices.Equal)
		if model != "sage" {
			if !same {
				t.Errorf("%s: bfloat16 activations changed a model whose layers read float32", model)
			}
			continue
		}
		if same {
			t.Fatalf("%s: bfloat16 activations changed nothing", model)
		}
		worst := 0.0
		for i := range loss {
			worst = max(worst, math.Abs(float64(loss[i]-f32Loss[i]))/float64(f32Loss[i]))
		}
		last := len(loss) - 1
		if d := math.Abs(float64(loss[last]-f32Loss[last])) / float64(f32Loss[last]); worst > 0.01 || d > 0.01 {
			t.Errorf("%s: losses %.3g apart at worst, %.3g at the end, from float32 activations'", model, worst, d)
		}
		t.Logf("%s: %d steps, largest relative loss difference %.2g", model, len(loss), worst)
	}
}

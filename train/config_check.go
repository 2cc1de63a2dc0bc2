package train

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/nn"
)

// SettingError is a wrong setting of a Config: Key is the setting's JSON
// name (a link setting's is "link." and its name), Problem what is wrong
// with its value. A front end that spells settings otherwise (the command
// line's flags) renames Key; the message reads the same.
type SettingError struct {
	Key, Problem string
}

func (e *SettingError) Error() string { return e.Key + ": " + e.Problem }

// bad is a SettingError for key.
func bad(key, format string, a ...any) error {
	return &SettingError{Key: key, Problem: fmt.Sprintf(format, a...)}
}

// q quotes a string value for a message (at most quote.Limit bytes of it).
func q(s string) string { return quote.Quote(s) }

// Validate names the first setting that is wrong.
func (c Config) Validate() error {
	if err := c.checkModel(); err != nil {
		return err
	}
	if err := c.checkTyped(); err != nil {
		return err
	}
	if err := c.checkTraining(); err != nil {
		return err
	}
	if err := c.checkSchedule(); err != nil {
		return err
	}
	return c.checkTask()
}

// checkModel checks the model's settings.
func (c Config) checkModel() error {
	switch {
	case c.Model != nn.KindSAGE && c.Model != nn.KindGCN && c.Model != nn.KindGIN && c.Model != nn.KindGAT && !c.TypedModel():
		return bad("model", "%s is not a model (want sage, gcn, gin or gat; rsage, rgcn or rgat for typed graphs)", q(c.Model))
	case c.Activations != "" && c.Activations != "float32" && c.Activations != "bfloat16":
		return bad("activations", "%s, want float32 or bfloat16", q(c.Activations))
	case c.BottomProducts != "" && c.BottomProducts != "float32" && c.BottomProducts != "bfloat16":
		return bad("bottom_products", "%s, want float32 or bfloat16", q(c.BottomProducts))
	case c.BottomProducts == "bfloat16" && c.Model != nn.KindSAGE && c.Model != nn.KindGAT:
		return bad("bottom_products", "bfloat16 is GraphSAGE's and GAT's only (model %s)", c.Model)
	case c.Norm != "" && c.Norm != nn.NormNone && c.Norm != nn.NormBatch && c.Norm != nn.NormLayer:
		return bad("norm", "%s, want none, batch or layer", q(c.Norm))
	case c.JK != "" && c.JK != nn.JKNone && c.JK != nn.JKLast && c.JK != nn.JKCat && c.JK != nn.JKMax:
		return bad("jk", "%s, want none, last, cat or max", q(c.JK))
	case c.NormOrJK() && (c.Activations == "bfloat16" || c.BottomProducts == "bfloat16"):
		return bad("norm", "%s, jk %s: normalisation and jumping knowledge need float32 activations and bottom products (activations %s, bottom products %s)",
			q(c.Norm), q(c.JK), q(c.Activations), q(c.BottomProducts))
	case c.SyncNorm && c.Norm != nn.NormBatch:
		return bad("sync_norm", "synchronises batch normalisation's statistics, but norm is %s (want batch)", q(c.Norm))
	case c.GINEps != "" && c.GINEps != "0" && c.GINEps != "learn":
		return bad("gin_eps", "%s, want 0 or learn", q(c.GINEps))
	case c.Heads < 0 || c.Heads > 1024:
		return bad("heads", "%d, want 1 to 1024", c.Heads)
	case c.Heads > 1 && !c.Attends():
		return bad("heads", "%d, but only gat and rgat have attention heads (model %s)", c.Heads, c.Model)
	case c.OutHeads < 0 || c.OutHeads > 1024:
		return bad("out_heads", "%d, want 1 to 1024 (0: as heads)", c.OutHeads)
	case c.OutHeads > 0 && !c.Attends():
		return bad("out_heads", "%d, but only gat and rgat have attention heads (model %s)", c.OutHeads, c.Model)
	case !(c.AttnDropout >= 0 && c.AttnDropout < 1):
		return bad("attn_dropout", "%g, want 0 <= p < 1", c.AttnDropout)
	case c.GATProjectFirst && c.Model != nn.KindGAT:
		return bad("gat_project_first", "is GAT's bottom layer's form, but the model is %s", c.Model)
	case c.AttnDropout != 0 && !c.Attends():
		return bad("attn_dropout", "%g, but only gat and rgat have attention (model %s)", c.AttnDropout, c.Model)
	case c.Attends() && (c.Layers > 1 || (c.JK != "" && c.JK != nn.JKNone)) && c.Hidden%max(c.Heads, 1) != 0:
		return bad("hidden", "%d is not a multiple of heads %d (a GAT hidden layer concatenates its heads)", c.Hidden, c.Heads)
	case c.Layers < 1 || c.Layers > nn.MaxLayers:
		return bad("layers", "%d, want 1 to %d", c.Layers, nn.MaxLayers)
	case c.Hidden < 1:
		return bad("hidden", "%d, want at least 1", c.Hidden)
	}
	return nil
}

// checkTraining checks the sampling, optimiser and schedule settings.
func (c Config) checkTraining() error {
	switch {
	case len(c.Fanouts) != c.Layers:
		return bad("fanouts", "%d values (%s) for %d layers; give one per layer", len(c.Fanouts), FormatFanouts(c.Fanouts), c.Layers)
	case c.Batch < 1:
		return bad("batch", "%d, want at least 1", c.Batch)
	case c.Epochs < 1:
		return bad("epochs", "%d, want at least 1", c.Epochs)
	case !(c.LR > 0) || math.IsInf(float64(c.LR), 0):
		return bad("lr", "%g, want a positive number", c.LR)
	case !(c.WeightDecay >= 0) || math.IsInf(float64(c.WeightDecay), 0):
		return bad("weight_decay", "%g, want a number >= 0", c.WeightDecay)
	case !validSchedule(c.LRSchedule):
		return bad("lr_schedule", "%s, want %s or %s", quote.Quote(c.LRSchedule), ScheduleConstant, ScheduleCosine)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return bad("dropout", "%g, want 0 <= p < 1", c.Dropout)
	case !(c.InDropout >= 0 && c.InDropout < 1):
		return bad("input_dropout", "%g, want 0 <= p < 1", c.InDropout)
	case c.EvalEvery < 1:
		return bad("eval_every", "%d, want at least 1", c.EvalEvery)
	case c.Patience < 0:
		return bad("patience", "%d, want >= 0", c.Patience)
	case c.EpochSteps < 0:
		return bad("epoch_steps", "%d, want >= 0 (0: a whole pass over the training items)", c.EpochSteps)
	}
	for i, f := range c.Fanouts {
		if f < -1 {
			return bad("fanouts", "value %d at position %d; use -1 for all neighbours", f, i+1)
		}
	}
	return nil
}

// checkSchedule checks when the run validates within epochs and the
// target it stops at.
func (c Config) checkSchedule() error {
	switch {
	case c.EvalEverySteps < 0:
		return bad("eval_every_steps", "%d, want at least 1 (0: validate at epochs' ends only)", c.EvalEverySteps)
	case !(c.EvalEveryEpochs >= 0 && c.EvalEveryEpochs <= 1):
		return bad("eval_every_epochs", "%g, want a fraction of an epoch, 0 < F <= 1 (0: validate at epochs' ends only)", c.EvalEveryEpochs)
	case c.EvalEverySteps > 0 && c.EvalEveryEpochs > 0:
		return bad("eval_every_epochs", "%g, and eval_every_steps is %d: give one of the two", c.EvalEveryEpochs, c.EvalEverySteps)
	case !(c.TargetAcc >= 0 && c.TargetAcc <= 1):
		return bad("target_acc", "%g, want 0 < A <= 1 (the task's primary validation figure; 0: no target)", c.TargetAcc)
	}
	return nil
}

// checkTask checks the task and its own settings: a node run has none of
// the link task's.
func (c Config) checkTask() error {
	switch c.TaskName() {
	case TaskNode:
		if c.Link != (LinkConfig{}) {
			return bad("task", "node, but link prediction's settings are given (%+v); give task link, or drop them", c.Link)
		}
		return nil
	case TaskLink:
		return c.Link.check(c.Batch)
	}
	return bad("task", "%s, want node or link", q(c.Task))
}

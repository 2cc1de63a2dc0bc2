package job

import (
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/cluster"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// The defaults below depend on the device a job trains on.

// GPUFeatureDType is the default feature type where training runs on
// GPUs (onGPUs probes, and is asked first), one or several: bfloat16, which is as accurate as float32 features
// on every accuracy test we have and halves the bytes the bottom layer
// reads (docs/perf.md). Elsewhere it is "" (the dataset's own type): on
// the CPU, and where the rows are sharded or exchanged over the devices
// (shardFeatures on or hosts), which needs float32 rows. (Under auto a
// bfloat16 table stays whole on every device.)
func GPUFeatureDType(onGPUs func() bool, shardFeatures string) string {
	if onGPUs() && shardFeatures != "on" && shardFeatures != "hosts" {
		return dataset.DTypeBFloat16
	}
	return ""
}

// GPUBottomProducts is the default bottom-layer products: bfloat16 where
// the bottom layer has a bfloat16 form at the input width inDim
// (nn.Config.BF16BottomApplies: GraphSAGE's, and GAT's aggregate-first
// layer, which needs input narrower than hidden and even widths; inDim 0:
// not known yet, and fitBottom decides once the dataset is loaded) and
// trains on GPUs (one or several: each device runs the step a lone GPU
// runs) with TF32 products (float32-grade products asked for otherwise)
// outside the hybrid mode (whose hot vertices need float32 bottom rows),
// with an even hidden width and without normalisation or jumping
// knowledge (which need float32 activations); as accurate as float32
// products on every accuracy test we have, and faster per products-sim
// step (docs/perf.md). Elsewhere "" (float32). onGPUs probes, and is
// asked last.
func GPUBottomProducts(cfg train.Config, inDim int, tf32, hybrid bool, onGPUs func() bool) string {
	if cfg.Layers < 2 || cfg.Hidden%2 != 0 || cfg.NormOrJK() || !tf32 || hybrid {
		return ""
	}
	if !cfg.ModelConfig(inDim, 1).BF16BottomApplies() || !onGPUs() {
		return ""
	}
	return "bfloat16"
}

// OnGPUs reports whether training runs on GPUs: one, several in this
// process, or one per process under a launcher (environ holds its
// variables); not on the CPU, and with device auto only when a GPU is
// there. The probe initialises the driver: a caller keeps its answer.
func OnGPUs(device string, c CUDA, environ []string) bool {
	if _, err := cluster.FromEnv(environ); err != nil || device == "cpu" {
		return false
	}
	if device == "auto" {
		if _, err := cuda.Available(c.Options()); err != nil {
			return false
		}
	}
	return true
}

package main

import (
	"os"

	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dist"
	"github.com/fanout-gnn/fanout/train"
)

// gpuFeatureDType is the default --feature-dtype where training runs on
// GPUs, one or several: bfloat16, which is as accurate as float32 features
// on every accuracy test we have and halves the bytes the bottom layer
// reads (docs/perf.md). Elsewhere it is "" (the dataset's own type): on
// the CPU, and where the rows are sharded or exchanged over the devices
// (--shard-features on or hosts), which needs float32 rows. (Under auto a
// bfloat16 table stays whole on every device.)
func (rf *runFlags) gpuFeatureDType() string {
	if rf.onGPUs() && rf.shardFeatures != "on" && rf.shardFeatures != "hosts" {
		return dataset.DTypeBFloat16
	}
	return ""
}

// gpuBottomProducts is the default --bottom-products: bfloat16 where
// GraphSAGE trains on GPUs (one or several: each device runs the step a
// lone GPU runs) with TF32 products (--tf32=false asks for float32-grade
// products) outside the hybrid mode (whose hot vertices need float32
// bottom rows), with an even hidden width; as accurate as float32 products
// on every accuracy test we have and 10% faster per products-sim step
// (docs/perf.md). Elsewhere "" (float32).
func (rf *runFlags) gpuBottomProducts(cfg train.Config) string {
	if cfg.Model != "sage" || cfg.Layers < 2 || cfg.Hidden%2 != 0 || !rf.cuda.tf32 || rf.mode == "hybrid" || !rf.onGPUs() {
		return ""
	}
	return "bfloat16"
}

// onGPUs reports whether training runs on GPUs: one, several in this
// process (--devices), or one per process under a launcher; not on the
// CPU, and with --device auto only when a GPU is there. The probe
// initialises the driver, so its answer is kept.
func (rf *runFlags) onGPUs() bool {
	if rf.gpuProbed {
		return rf.gpu
	}
	rf.gpuProbed = true
	if _, err := dist.FromEnv(os.Environ()); err != nil || rf.device == "cpu" {
		return false
	}
	if rf.device == "auto" {
		if _, err := cuda.Available(rf.cuda.options()); err != nil {
			return false
		}
	}
	rf.gpu = true
	return true
}

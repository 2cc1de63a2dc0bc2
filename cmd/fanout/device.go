package main

import (
	"github.com/fanout-gnn/fanout/train/job"
)

// cudaFlags are the GPU options.
type cudaFlags = job.CUDA

// cudaOption is one GPU option: its flag (and config key) and its field.
type cudaOption struct {
	name, usage string
	field       func(c *cudaFlags) any
}

func cudaOptions() []cudaOption {
	return []cudaOption{
		{"cuda-lib-dir", "directory holding libcuda, libnvrtc and libcublas (default: the system's library path)", func(c *cudaFlags) any { return &c.LibDir }},
		{"kernel-cache", "directory for compiled GPU kernels (default: the user cache directory)", func(c *cudaFlags) any { return &c.CacheDir }},
		{"tf32", "matrix products on the GPU's TF32 tensor cores in one pass (" + tf32Error + "; as accurate as float32 on every accuracy test we have, docs/perf.md); --tf32=false gives the 3xTF32 products of --tf32x3", func(c *cudaFlags) any { return &c.TF32 }},
		{"tf32x3", "with --tf32=false: tensor cores with split inputs (3xTF32), about float32's accuracy and about a third slower per step than --tf32; --tf32=false --tf32x3=false gives cuBLAS's float32 products", func(c *cudaFlags) any { return &c.TF32x3 }},
		{"nccl-all-reduce", "several GPUs of one process sum gradients with NCCL's all-reduce instead of kernels that read the peers' memory", func(c *cudaFlags) any { return &c.NCCLAllReduce }},
		{"deterministic", "bitwise reproducible GPU runs: the aggregation backward sorts and gathers instead of adding with float atomics (slower)", func(c *cudaFlags) any { return &c.Deterministic }},
	}
}

// cudaDefaults are the GPU settings a user gets without flags: TF32
// products (as accurate as float32 on every accuracy test we have, and the
// fastest: docs/perf.md), with 3xTF32 behind --tf32=false.
func cudaDefaults() cudaFlags { return cudaFlags{TF32: true, TF32x3: true} }

// tf32Error is the measured effect of --tf32 on a product (docs/perf.md).
const tf32Error = "about 2.6e-4 relative error in a product, measured"

package main

import (
	"os"

	"github.com/fanout-gnn/fanout/train/job"
)

// onGPUs reports whether training runs on GPUs (job.OnGPUs), for the
// defaults that depend on it; the probe initialises the driver, so its
// answer is kept.
func (rf *runFlags) onGPUs() bool {
	if !rf.gpuProbed {
		rf.gpuProbed, rf.gpu = true, job.OnGPUs(rf.j.Device, rf.j.CUDA, os.Environ())
	}
	return rf.gpu
}

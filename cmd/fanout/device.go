package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/backend/record"
)

// cudaFlags are the GPU options.
type cudaFlags struct {
	libDir, cacheDir string
	tf32, tf32x3     bool
	deterministic    bool
}

// cudaOption is one GPU option: its flag (and config key) and its field.
type cudaOption struct {
	name, usage string
	field       func(c *cudaFlags) any
}

func cudaOptions() []cudaOption {
	return []cudaOption{
		{"cuda-lib-dir", "directory holding libcuda, libnvrtc and libcublas (default: the system's library path)", func(c *cudaFlags) any { return &c.libDir }},
		{"kernel-cache", "directory for compiled GPU kernels (default: the user cache directory)", func(c *cudaFlags) any { return &c.cacheDir }},
		{"tf32", "matrix products on the GPU's TF32 tensor cores in one pass (" + tf32Error + "; as accurate as float32 on every accuracy test we have, docs/perf.md); --tf32=false gives the 3xTF32 products of --tf32x3", func(c *cudaFlags) any { return &c.tf32 }},
		{"tf32x3", "with --tf32=false: tensor cores with split inputs (3xTF32), about float32's accuracy and about a third slower per step than --tf32; --tf32=false --tf32x3=false gives cuBLAS's float32 products", func(c *cudaFlags) any { return &c.tf32x3 }},
		{"deterministic", "bitwise reproducible GPU runs: the aggregation backward sorts and gathers instead of adding with float atomics (slower)", func(c *cudaFlags) any { return &c.deterministic }},
	}
}

// defaults are the GPU settings a user gets without flags: TF32 products
// (as accurate as float32 on every accuracy test we have, and the fastest:
// docs/perf.md), with 3xTF32 behind --tf32=false.
func (c *cudaFlags) defaults() { c.tf32, c.tf32x3 = true, true }

// options are the CUDA backend's options the flags ask for (--tf32, the
// faster single-pass products, overrides --tf32x3).
func (c cudaFlags) options() cuda.Options {
	return cuda.Options{LibDir: c.libDir, CacheDir: c.cacheDir, TF32: c.tf32, TF32x3: c.tf32x3 && !c.tf32, Deterministic: c.deterministic}
}

// tf32Error is the measured effect of --tf32 on a product (docs/perf.md).
const tf32Error = "about 2.6e-4 relative error in a product, measured"

func (c *cudaFlags) add(fs *flag.FlagSet) {
	c.defaults()
	for _, o := range cudaOptions() {
		register(fs, o.name, o.usage, o.field(c))
	}
}

// openBackend turns --device into a backend and its description.
// auto picks a working GPU and says which, or the CPU and says why.
func openBackend(spec string, threads int, cf cudaFlags, stderr io.Writer) (backend.Backend, string, error) {
	if err := checkThreads(threads); err != nil {
		return nil, "", err
	}
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	opt := cf.options()
	switch {
	case spec == "cpu":
		be := cpu.New(threads)
		return be, be.Name(), nil
	case spec == "auto":
		if _, err := cuda.Available(opt); err != nil {
			fmt.Fprintf(stderr, "device auto: training on the CPU: %s\n", fallbackReason(err))
			be := cpu.New(threads)
			return be, be.Name(), nil
		}
		return openCUDA(opt)
	case spec == "cuda" || strings.HasPrefix(spec, "cuda:"):
		if n, ok := strings.CutPrefix(spec, "cuda:"); ok {
			d, err := strconv.Atoi(n)
			if err != nil || d < 0 {
				return nil, "", fmt.Errorf("--device %s: want cuda:N with N a device number", quoted(spec))
			}
			opt.Device = d
		}
		return openCUDA(opt)
	}
	return nil, "", fmt.Errorf("--device %s: want auto, cpu, cuda or cuda:N", quoted(spec))
}

// fallbackReason words why no GPU could be used; never blank.
func fallbackReason(err error) string {
	msg := ""
	if err != nil {
		msg = strings.TrimRight(strings.TrimSpace(err.Error()), ":")
	}
	if msg == "" {
		return "no usable CUDA device (the loader gave no reason)"
	}
	return msg
}

func openCUDA(opt cuda.Options) (backend.Backend, string, error) {
	be, err := cuda.New(opt)
	if err != nil {
		return nil, "", fmt.Errorf("--device cuda: %w", err)
	}
	return be, be.Name(), nil
}

// closeBackend releases a backend's resources.
func closeBackend(be backend.Backend) {
	if c, ok := be.(backend.Closer); ok {
		c.Close()
	}
}

// withCapture gives be the capture capability the replay driver needs: its
// own (CUDA graphs) or a recording wrapper (any backend).
func withCapture(be backend.Backend) backend.Backend {
	if _, ok := be.(backend.Capturer); ok {
		return be
	}
	return record.New(be)
}

// cudaOf finds the CUDA backend under be, for its counters.
func cudaOf(be backend.Backend) (*cuda.Backend, bool) {
	c, ok := be.(*cuda.Backend)
	return c, ok
}

// resolveMode turns --mode auto into replay on a GPU (it beats eager there:
// docs/perf.md) and eager on the CPU (where launches cost nothing).
func resolveMode(mode string, be backend.Backend) string {
	if mode != "auto" {
		return mode
	}
	if _, ok := cudaOf(be); ok {
		return "replay"
	}
	return "eager"
}

// Package traintest holds what the drivers' tests share: the tiny preset
// with its configuration, a group of CPU devices joined in process, and a
// GPU opened for bitwise comparisons.
package traintest

import (
	"context"
	"os"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
)

// Tiny generates the tiny preset and returns it with the preset's model
// and sampling, for two epochs.
func Tiny(t *testing.T) (*dataset.Dataset, train.Config) { return Preset(t, "tiny") }

// Preset generates the named preset (tiny, hetero-tiny) and returns it
// with the preset's model and sampling, for two epochs.
func Preset(t *testing.T, name string) (*dataset.Dataset, train.Config) {
	t.Helper()
	p, err := rmat.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ds := Generate(t, p)
	c := train.Defaults()
	c.Model, c.Layers, c.Hidden, c.Batch, c.Fanouts = p.Model, p.Layers, p.Hidden, p.Batch, p.Fanouts
	c.Dropout, c.LR, c.Epochs = p.Dropout, p.LR, 2
	return ds, c
}

// Generate generates preset p with seed 1 on two threads.
func Generate(t testing.TB, p rmat.Preset) *dataset.Dataset {
	t.Helper()
	ds, err := rmat.Generate(p, rmat.Options{Seed: 1, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Run trains cfg on ds with the eager driver on a CPU backend of two
// threads, with opt, and returns the run's summary.
func Run(t *testing.T, ds *dataset.Dataset, cfg train.Config, opt train.Options) *train.Summary {
	t.Helper()
	tr, err := train.New(cpu.New(2), ds, cfg, opt)
	var s *train.Summary
	if err == nil {
		s, err = tr.Run(context.Background())
		tr.Close()
	}
	if err != nil {
		t.Fatalf("training %s on %s: %v", cfg.Model, ds.Name, err)
	}
	return s
}

// GPU opens device 0 on the deterministic path with the 3xTF32 products
// (runs compare bitwise), closed at the end of the test, or skips the test
// when there is no usable device.
func GPU(t testing.TB) *cuda.Backend {
	t.Helper()
	return GPUWith(t, cuda.Options{Deterministic: true, TF32x3: true})
}

// GPUWith opens device 0 with opt (its kernel cache in a temporary
// folder), closed at the end of the test, or skips the test when there is
// no usable device.
func GPUWith(t testing.TB, opt cuda.Options) *cuda.Backend {
	t.Helper()
	dir, err := os.MkdirTemp("", "fanout-test-kernels-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	opt.CacheDir = dir
	be, err := cuda.New(opt)
	if err != nil {
		if _, aerr := cuda.Available(cuda.Options{}); aerr != nil {
			t.Skip("no CUDA device: " + aerr.Error())
		}
		t.Fatalf("cuda.New: %v", err) // a device, but its backend failed
	}
	t.Cleanup(func() { be.Close() })
	return be
}

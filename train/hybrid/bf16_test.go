package hybrid

import (
	"context"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// hybridLosses trains cfg on ds with the hybrid driver (part of the table
// cached; hot vertices as hot says) holding the features as dt, and
// returns the losses and the figures.
func hybridLosses(t *testing.T, ds *dataset.Dataset, cfg train.Config, dt backend.DType, hot HotOptions) ([]float32, *Stats) {
	t.Helper()
	var losses []float32
	hot.NewCPU = func() (backend.Backend, error) { return cpu.New(2), nil }
	topt := train.Options{OnStep: func(_, _ int, l float32) { losses = append(losses, l) }}
	_, st, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg, topt, Options{CacheRows: 2000, FeatureDType: dt, Hot: hot})
	if err != nil {
		t.Fatal(err)
	}
	return losses, st
}

// TestBF16Dataset: a dataset holding bfloat16 features trains in the
// hybrid mode, its tiers bfloat16 by default (2 bytes a row value over
// PCIe), bitwise as the float32 dataset held as bfloat16; with hot
// vertices, whose rows the CPU computes from the dataset's own values,
// bitwise as the float32 dataset of the same (widened) values held as
// bfloat16; held as float32 (widened), bitwise as that float32 dataset.
func TestBF16Dataset(t *testing.T) {
	f32, cfg := tiny(t)
	cfg.Epochs = 1
	bf16 := *f32
	bf16.RoundFeatures()
	widened := bf16
	widened.WidenFeatures()
	none := HotOptions{}
	got, st := hybridLosses(t, &bf16, cfg, 0, none)
	want, _ := hybridLosses(t, f32, cfg, backend.BF16, none)
	if !slices.Equal(got, want) {
		t.Fatalf("bfloat16 dataset:\n%v\nfloat32 dataset held as bfloat16:\n%v", got, want)
	}
	if st.HostRows == 0 || st.PCIeBytes != st.HostRows*int64(f32.FeatDim)*2 {
		t.Errorf("%d bytes over PCIe for %d host rows of %d features: the host tier is not bfloat16", st.PCIeBytes, st.HostRows, f32.FeatDim)
	}
	if plain, _ := hybridLosses(t, f32, cfg, backend.F32, none); slices.Equal(plain, got) {
		t.Fatal("float32 features train as bfloat16 ones: the comparison cannot tell them apart")
	}
	hot := HotOptions{Ratio: 0.1, Staleness: 1, SuperBatch: 4}
	got, st = hybridLosses(t, &bf16, cfg, 0, hot)
	want, _ = hybridLosses(t, &widened, cfg, backend.BF16, hot)
	if st.Hot == nil || !slices.Equal(got, want) {
		t.Fatalf("hot vertices (%v): bfloat16 dataset\n%v\nwidened dataset held as bfloat16\n%v", st.Hot != nil, got, want)
	}
	got, _ = hybridLosses(t, &bf16, cfg, backend.F32, none)
	want, _ = hybridLosses(t, &widened, cfg, backend.F32, none)
	if !slices.Equal(got, want) {
		t.Fatalf("held as float32: bfloat16 dataset\n%v\nwidened dataset\n%v", got, want)
	}
}

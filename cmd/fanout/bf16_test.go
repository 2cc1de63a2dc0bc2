package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/job"
)

// genTiny writes the tiny preset to a fresh directory with the extra gen
// flags and returns the directory.
func genTiny(t *testing.T, flags ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if code, out, stderr := fanout(t, append([]string{"gen", "tiny", "--out", dir}, flags...)...); code != 0 {
		t.Fatalf("gen %v: exit %d\n%s%s", flags, code, out, stderr)
	}
	return dir
}

// openData opens a dataset directory, closed at the end of the test.
func openData(t *testing.T, dir string) *dataset.Dataset {
	t.Helper()
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return ds
}

// stepLosses trains cfg on ds on the CPU (replayed, or eager) with the
// features held as dt and returns every step's loss.
func stepLosses(t *testing.T, ds *dataset.Dataset, cfg train.Config, dt backend.DType, replay bool) []float32 {
	t.Helper()
	var losses []float32
	var be backend.Backend = cpu.New(2)
	if replay {
		be = record.New(be)
	}
	opt := train.Options{Mode: train.Auto.Resolve(replay), FeatureDType: dt, OnStep: func(_, _ int, l float32) { losses = append(losses, l) }}
	tr, err := train.New(be, ds, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if replay {
		_, _, err = tr.RunReplay(context.Background(), train.ReplayOptions{})
	} else {
		_, err = tr.Run(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	return losses
}

// TestGenBF16: gen --feature-dtype bfloat16 stores tiny's features as
// bfloat16 in half the bytes, info says so, and training from it (held as
// bfloat16 by default) equals, loss for loss bitwise, training from the
// float32 dataset held as bfloat16, eager and replayed; held as float32
// it equals the float32 dataset of its widened values.
func TestGenBF16(t *testing.T) {
	f32Dir, bf16Dir := genTiny(t), genTiny(t, "--feature-dtype", "bfloat16")
	size := func(dir string) int64 {
		st, err := os.Stat(filepath.Join(dir, dataset.FeatFile))
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	const values = 16384 * 32
	if s32, s16 := size(f32Dir), size(bf16Dir); s32-s16 != 2*values || s32 != 4*values+128 {
		t.Errorf("feat.npy: %d bytes as float32, %d as bfloat16; want %d and %d", s32, s16, 4*values+128, 2*values+128)
	}
	code, out, stderr := fanout(t, "info", bf16Dir)
	if code != 0 || !strings.Contains(out, "features   32 bfloat16 per vertex (1.0 MiB)\n") {
		t.Errorf("info: exit %d\n%s%s", code, out, stderr)
	}
	f32, bf16 := openData(t, f32Dir), openData(t, bf16Dir)
	if bf16.FeatureDType() != backend.BF16 || !slices.Equal(bf16.FeaturesBF16, backend.ToBF16(f32.Features)) {
		t.Fatal("the bfloat16 dataset's features are not the float32 ones rounded")
	}
	p, err := rmat.Lookup("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg := job.PresetConfig(p)
	cfg.Epochs = 1
	for _, replay := range []bool{false, true} {
		got, want := stepLosses(t, bf16, cfg, 0, replay), stepLosses(t, f32, cfg, backend.BF16, replay)
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Fatalf("replay %v: the bfloat16 dataset's losses\n%v\nthe float32 dataset's held as bfloat16\n%v", replay, got, want)
		}
		if plain := stepLosses(t, f32, cfg, backend.F32, replay); slices.Equal(plain, got) {
			t.Fatalf("replay %v: float32 features give the bfloat16 losses: the comparison cannot tell them apart", replay)
		}
	}
	widened := *bf16
	widened.WidenFeatures()
	if got, want := stepLosses(t, bf16, cfg, backend.F32, false), stepLosses(t, &widened, cfg, backend.F32, false); !slices.Equal(got, want) {
		t.Fatalf("held as float32: the bfloat16 dataset's losses\n%v\nthe widened dataset's\n%v", got, want)
	}
}

// TestTrainBF16Data: the command line trains a bfloat16 dataset as
// bfloat16 unless told otherwise (the same results as the float32 dataset
// with --feature-dtype bfloat16), in each single-device mode and over
// several devices, where sharding needs float32 rows and says how to get
// them; gen and import refuse an unknown dtype.
func TestTrainBF16Data(t *testing.T) {
	f32Dir, bf16Dir := genTiny(t), genTiny(t, "--feature-dtype", "bfloat16")
	acc := func(out string) string { return strings.SplitN(out, ";", 2)[0] }
	for _, mode := range [][]string{{"--mode", "eager"}, {"--mode", "replay"}, {"--mode", "hybrid", "--hot-ratio", "0", "--cache-rows", "1000"}} {
		args := append([]string{"train", "--device", "cpu", "--epochs", "1"}, mode...)
		code, got, stderr := fanout(t, append(args, "--data", bf16Dir)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", mode, code, stderr)
		}
		code, want, stderr := fanout(t, append(args, "--data", f32Dir, "--feature-dtype", "bfloat16")...)
		if code != 0 || acc(got) != acc(want) || !strings.Contains(got, "test accuracy") {
			t.Errorf("%v: the bfloat16 dataset: %q; the float32 one held as bfloat16: %q (exit %d: %s)", mode, got, want, code, stderr)
		}
	}
	code, _, stderr := fanout(t, "train", "--device", "cpu", "--epochs", "1", "--data", bf16Dir, "--mode", "hybrid", "--hot-ratio", "0.1", "--super-batch", "4")
	if code != 0 || !strings.Contains(stderr, "super-batches of rows (inputs)") {
		t.Errorf("hot vertices over a bfloat16 dataset: exit %d: %s", code, stderr)
	}
	devices := []string{"train", "--device", "cpu", "--devices", "2", "--epochs", "1", "--data", bf16Dir}
	oneLineError(t, "shard-features: only float32 features are sharded; the dataset's are bfloat16: --feature-dtype float32 widens them", append(devices, "--shard-features", "on")...)
	oneLineError(t, "shard-features hosts: only float32 features are exchanged; the dataset's are bfloat16", append(devices, "--shard-features", "hosts")...)
	code, whole, stderr := fanout(t, append(devices, "--feature-dtype", "float32", "--shard-features", "off")...)
	if code != 0 || !strings.Contains(stderr, "features: the whole table (2.0 MiB) on every device") {
		t.Fatalf("whole float32 table: exit %d: %s", code, stderr)
	}
	for _, shard := range []string{"on", "hosts"} {
		code, out, stderr := fanout(t, append(devices, "--feature-dtype", "float32", "--shard-features", shard)...)
		if code != 0 || acc(out) != acc(whole) {
			t.Errorf("--shard-features %s of the widened rows: %q, the whole table: %q (exit %d: %s)", shard, out, whole, code, stderr)
		}
	}
	code, out, stderr := fanout(t, append(devices, "--shard-features", "off")...)
	if code != 0 || !strings.Contains(stderr, "features: the whole table (1.0 MiB) on every device") || !strings.Contains(out, "test accuracy") {
		t.Errorf("whole bfloat16 table: exit %d: %s%s", code, out, stderr)
	}
	oneLineError(t, `feature-dtype: "float16"`, "gen", "tiny", "--out", t.TempDir(), "--feature-dtype", "float16")
	oneLineError(t, `feature-dtype: "float16"`, "import", "npz", "x.npz", "--out", t.TempDir(), "--feature-dtype", "float16")
}

// TestImportBF16: import --feature-dtype bfloat16 normalises the features
// in float32 and then rounds them, so it stores exactly the float32
// import's values rounded to bfloat16.
func TestImportBF16(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "ring.npz")
	ringNPZ(t, src, 0.3) // row 7 is (0, 0.3, 0, 1): rounding before normalising would differ
	split := []string{"--train-per-class", "5", "--valid", "10", "--test", "20", "--normalize-features"}
	dirs := map[string]string{}
	for _, dt := range []string{"float32", "bfloat16"} {
		dirs[dt] = filepath.Join(dir, dt)
		code, out, stderr := fanout(t, append([]string{"import", "npz", src, "--out", dirs[dt], "--feature-dtype", dt}, split...)...)
		if code != 0 || !strings.Contains(out, dt+" features") {
			t.Fatalf("import as %s: exit %d\n%s%s", dt, code, out, stderr)
		}
	}
	f32, bf16 := openData(t, dirs["float32"]), openData(t, dirs["bfloat16"])
	if !slices.Equal(bf16.FeaturesBF16, backend.ToBF16(f32.Features)) {
		t.Fatalf("bfloat16 import %v, want the float32 import rounded %v", bf16.FeaturesBF16[28:32], backend.ToBF16(f32.Features[28:32]))
	}
	code, out, _ := fanout(t, "info", dirs["bfloat16"])
	if code != 0 || !strings.Contains(out, "normalize-features") || !strings.Contains(out, "4 bfloat16 per vertex") {
		t.Errorf("info:\n%s", out)
	}
}

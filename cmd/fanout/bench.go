package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/train"
)

// benchReport is bench's machine-readable line (--json).
type benchReport struct {
	Preset     string  `json:"preset"`
	Device     string  `json:"device"`
	Mode       string  `json:"mode"`
	GenSeconds float64 `json:"gen_s"`
	train.BenchResult
	MatmulGFLOPS float64 `json:"matmul_gflops"`
	MatmulShape  string  `json:"matmul_shape"`
	BandwidthGBs float64 `json:"bandwidth_gbs"` // measured row-copy bandwidth (bytes read + written)
	train.Floor
	FloorSeconds float64 `json:"floor_s"`    // per step: GFLOP / matmul rate + GB / bandwidth
	Efficiency   float64 `json:"efficiency"` // floor / measured step time
	PeakBytes    int64   `json:"peak_bytes,omitempty"`
	// Per step in the unsynced pass, where the backend counts them (CUDA).
	Launches  float64 `json:"launches_per_step,omitempty"`
	Gemms     float64 `json:"gemms_per_step,omitempty"`
	HostSyncs float64 `json:"host_syncs_per_step,omitempty"`
	Date      string  `json:"date"`
	TF32      bool    `json:"tf32,omitempty"`
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	var rf runFlags
	fs.StringVar(&rf.src.data, "data", "", "dataset directory (default: generate --preset in memory)")
	fs.StringVar(&rf.src.preset, "preset", "products-sim", "preset to generate in memory: "+presetNames())
	fs.StringVar(&rf.device, "device", "auto", "auto, cpu, cuda or cuda:N")
	fs.IntVar(&rf.threads, "threads", 0, "CPU worker threads (0 = all cores)")
	mode := fs.String("mode", "eager", "driver: eager")
	steps := fs.Int("steps", 20, "steps to measure (the epoch time is extrapolated)")
	warmup := fs.Int("warmup", 3, "steps to run before measuring")
	asJSON := fs.Bool("json", false, "print one JSON line instead of a table")
	rf.cuda.add(fs)
	hf := addHyperFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q", pos[0])
	}
	if *mode != "eager" {
		return fmt.Errorf("--mode %q: only eager is available", *mode)
	}
	if *steps < 1 || *warmup < 0 {
		return fmt.Errorf("--steps must be >= 1 and --warmup >= 0")
	}
	cfg, err := resolveConfig(fs, &rf, hf)
	if err != nil {
		return err
	}
	start := time.Now()
	ds, err := loadDataset(rf.src, rf.threads, stderr)
	if err != nil {
		return err
	}
	defer ds.Close()
	rep := benchReport{Preset: ds.Name, Mode: *mode, GenSeconds: time.Since(start).Seconds(), Date: time.Now().UTC().Format(time.DateOnly)}
	be, desc, err := openBackend(rf.device, rf.threads, rf.cuda, stderr)
	if err != nil {
		return err
	}
	defer closeBackend(be)
	rep.Device = desc
	tr, err := train.New(be, ds, cfg, train.Options{Device: desc})
	if err != nil {
		return err
	}
	defer tr.Close()
	fmt.Fprintf(stderr, "measuring %d steps (after %d warm-up) of %s on %s\n", *steps, *warmup, ds.Name, desc)
	var hooks train.BenchHooks
	if c, ok := be.(*cuda.Backend); ok {
		hooks.Before = c.ResetStats
		hooks.After = func() {
			st, n := c.Stats(), float64(*steps)
			rep.Launches, rep.Gemms, rep.HostSyncs = float64(st.Launches)/n, float64(st.Gemms)/n, float64(st.HostSyncs)/n
		}
	}
	if rep.BenchResult, err = tr.Bench(*steps, *warmup, hooks); err != nil {
		return err
	}
	rep.TF32 = rf.cuda.tf32
	m := int(rep.InputRows)
	rep.MatmulShape = fmt.Sprintf("[%d x %d] x [%d x %d]", m, ds.FeatDim, ds.FeatDim, cfg.Hidden)
	if rep.MatmulGFLOPS, err = gemmRate(be, max(m, 1), ds.FeatDim, cfg.Hidden); err != nil {
		return err
	}
	if rep.BandwidthGBs, err = copyRate(be); err != nil {
		return err
	}
	rep.Floor = tr.StepFloor(rep.Blocks)
	rep.FloorSeconds = rep.GFLOP/rep.MatmulGFLOPS + rep.GB/rep.BandwidthGBs
	rep.Efficiency = rep.FloorSeconds / rep.StepSeconds
	if ms, ok := be.(backend.MemoryStats); ok {
		rep.PeakBytes = ms.PeakBytes()
	}
	if *asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	printBench(stdout, rep)
	return nil
}

// gemmRate measures the backend's matrix product rate (GFLOP/s) at the
// bottom layer's shape: [m, k] x [k, n].
func gemmRate(be backend.Backend, m, k, n int) (float64, error) {
	var bufs [3]backend.Buffer
	for i, size := range []int{m * k, k * n, m * n} {
		b, err := be.Alloc(backend.F32, size)
		if err != nil {
			return 0, err
		}
		defer be.Free(b)
		be.Fill(b, 0.5)
		bufs[i] = b
	}
	be.Gemm(false, false, m, n, k, 1, bufs[0], bufs[1], 0, bufs[2])
	if err := be.Sync(); err != nil {
		return 0, err
	}
	reps := 0
	start := time.Now()
	for time.Since(start) < 300*time.Millisecond || reps < 3 {
		be.Gemm(false, false, m, n, k, 1, bufs[0], bufs[1], 0, bufs[2])
		if err := be.Sync(); err != nil {
			return 0, err
		}
		reps++
	}
	return 2 * float64(m) * float64(k) * float64(n) * float64(reps) / time.Since(start).Seconds() / 1e9, nil
}

// copyRate measures memory bandwidth (GB/s, bytes read plus written) with
// the backend's row gather over 256 MiB of rows in order.
func copyRate(be backend.Backend) (float64, error) {
	const dim, rows = 256, 1 << 18
	table, err := be.Alloc(backend.F32, dim*rows)
	if err != nil {
		return 0, err
	}
	defer be.Free(table)
	out, err := be.Alloc(backend.F32, dim*rows)
	if err != nil {
		return 0, err
	}
	defer be.Free(out)
	ids := make([]int32, rows+1)
	for i := range rows {
		ids[i] = int32(i)
	}
	ids[rows] = rows
	idb, err := be.Upload(ids)
	if err != nil {
		return 0, err
	}
	defer be.Free(idb)
	n := backend.Count{Buf: be.View(idb, rows, 1), Cap: rows}
	be.Fill(table, 0.25)
	be.Gather(table, dim, idb, n, out)
	if err := be.Sync(); err != nil {
		return 0, err
	}
	reps := 0
	start := time.Now()
	for time.Since(start) < 300*time.Millisecond || reps < 3 {
		be.Gather(table, dim, idb, n, out)
		if err := be.Sync(); err != nil {
			return 0, err
		}
		reps++
	}
	return 2 * 4 * dim * rows * float64(reps) / time.Since(start).Seconds() / 1e9, nil
}

func printBench(w io.Writer, r benchReport) {
	ms := func(s float64) string { return fmt.Sprintf("%.2f ms", s*1e3) }
	fmt.Fprintf(w, "preset %s on %s, %s mode (%s)\n", r.Preset, r.Device, r.Mode, r.Date)
	fmt.Fprintf(w, "  generation        %.1f s (not part of the epoch)\n", r.GenSeconds)
	fmt.Fprintf(w, "  epoch             %.2f s (%d steps x %s, extrapolated from %d steps)\n", r.EpochSeconds, r.EpochSteps, ms(r.StepSeconds), r.Steps)
	fmt.Fprintf(w, "  split per step    sample %s, gather %s, train %s, idle %s (stage-synced pass)\n", ms(r.SampleS), ms(r.GatherS), ms(r.TrainS), ms(r.IdleS))
	fmt.Fprintf(w, "  sampled edges     %.0f per step, %.2f M/s\n", r.EdgesPerStep, r.EdgesPerS/1e6)
	fmt.Fprintf(w, "  input rows        %.0f per step\n", r.InputRows)
	fmt.Fprintf(w, "  matmul            %.1f GFLOP/s at %s\n", r.MatmulGFLOPS, r.MatmulShape)
	fmt.Fprintf(w, "  bandwidth         %.0f GB/s (row copy)\n", r.BandwidthGBs)
	fmt.Fprintf(w, "  floor             %s per step (%.1f GFLOP, %.2f GB); efficiency %.0f%%\n", ms(r.FloorSeconds), r.GFLOP, r.GB, 100*r.Efficiency)
	if r.Launches > 0 {
		fmt.Fprintf(w, "  per step          %.0f kernel launches, %.0f GEMMs, %.0f host syncs\n", r.Launches, r.Gemms, r.HostSyncs)
	}
	if r.PeakBytes > 0 {
		fmt.Fprintf(w, "  peak memory       %.1f MiB\n", float64(r.PeakBytes)/(1<<20))
	}
	fmt.Fprintf(w, "  loss              %.4f (mean of measured steps)\n", r.Loss)
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/report"
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
	// The floor at the device's peak rates (from its attributes, not
	// measured): GFLOP / dense 16-bit tensor rate + GB / memory bandwidth.
	Peak             *cuda.Peak `json:"peak,omitempty"`
	PeakFloorSeconds float64    `json:"peak_floor_s,omitempty"`
	PeakBytes        int64      `json:"peak_bytes,omitempty"`
	// Per step in the unsynced pass, where the backend counts them (CUDA).
	Launches       float64 `json:"launches_per_step,omitempty"`
	Gemms          float64 `json:"gemms_per_step,omitempty"`
	HostSyncs      float64 `json:"host_syncs_per_step,omitempty"`
	GraphLaunches  float64 `json:"graph_launches_per_step,omitempty"`
	Date           string  `json:"date"`
	TF32           bool    `json:"tf32,omitempty"`
	TF32x3         bool    `json:"tf32x3,omitempty"`
	FeatureDType   string  `json:"feature_dtype,omitempty"`
	BottomProducts string  `json:"bottom_products,omitempty"`
	// Replay mode.
	Replay           *train.ReplayStats `json:"replay,omitempty"`
	Busy             float64            `json:"busy,omitempty"`               // device time in replays over wall time
	PeakOverIdeal    float64            `json:"peak_over_ideal,omitempty"`    // peak memory over peak with the ideal envelope
	SpeedupOverEager float64            `json:"speedup_over_eager,omitempty"` // eager step time over this one, same run
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	var rf runFlags
	rf.add(fs, "products-sim")
	mode := fs.String("mode", "auto", "driver: eager, replay, both (eager and replay measured in one run), or auto (replay on a GPU, eager on the CPU)")
	steps := fs.Int("steps", 20, "steps to measure (the epoch time is extrapolated)")
	warmup := fs.Int("warmup", 3, "steps to run before measuring")
	asJSON := fs.Bool("json", false, "print one JSON line per mode instead of a table")
	fs.StringVar(&rf.deviceCounts, "devices", "", "train data-parallel on these device counts and report the epoch and speed-up: 2, 1,2,4 or all (--epochs epochs each, 3 by default)")
	plotOut := fs.String("plot", "", "also draw the step's time split (sample, gather, train, idle) per mode as a PNG to this file")
	prof := fs.Bool("profile", false, "add an eager pass with each op timed on the device, and print the ops that take the most time")
	hf := addHyperFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %s", quoted(pos[0]))
	}
	if *mode != "auto" {
		if _, err := parseModes(*mode); err != nil {
			return err
		}
	}
	if *steps < 1 || *warmup < 0 {
		return fmt.Errorf("--steps must be >= 1 and --warmup >= 0")
	}
	if err := checkWritable("--plot", *plotOut); err != nil {
		return err
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
	gen := time.Since(start).Seconds()
	if rf.deviceCounts != "" {
		counts, err := parseDeviceCounts(rf.deviceCounts, func() (int, error) { return allDevices(&rf) })
		if err != nil {
			return err
		}
		if !setFlags(fs)["epochs"] {
			cfg.Epochs = 3
		}
		if *mode == "both" {
			return fmt.Errorf("mode: both measures one device; with --devices choose eager, replay or auto")
		}
		rf.mode = *mode
		return benchDevices(ctx, &rf, counts, ds, cfg, *asJSON, stdout, stderr)
	}
	rf.fitBatch(&cfg, ds, 1, stderr)
	be, desc, err := openBackend(rf.device, rf.threads, rf.cuda, stderr)
	if err != nil {
		return err
	}
	defer closeBackend(be)
	modes, err := parseModes(resolveMode(*mode, be))
	if err != nil {
		return err
	}
	var eagerStep float64
	var splits []report.Split
	for _, m := range modes {
		rep := benchReport{Preset: ds.Name, Mode: m, GenSeconds: gen, Device: desc, TF32: rf.cuda.tf32, TF32x3: rf.cuda.options().TF32x3, FeatureDType: rf.featureDType,
			BottomProducts: cfg.BottomProducts,
			Date:           time.Now().UTC().Format(time.DateOnly)}
		b := be
		if m == "replay" {
			b = withCapture(be)
		}
		fmt.Fprintf(stderr, "measuring %d %s steps (after %d warm-up) of %s on %s\n", *steps, m, *warmup, ds.Name, desc)
		if err := benchMode(b, ds, cfg, &rep, *steps, *warmup, rf.replay()); err != nil {
			return err
		}
		if m == "eager" {
			eagerStep = rep.StepSeconds
		} else if eagerStep > 0 {
			rep.SpeedupOverEager = eagerStep / rep.StepSeconds
		}
		splits = append(splits, report.Split{Label: m, Sample: rep.SampleS, Gather: rep.GatherS, Train: rep.TrainS, Idle: rep.IdleS, Step: rep.StepSeconds})
		if *asJSON {
			b, _ := json.Marshal(rep)
			fmt.Fprintln(stdout, string(b))
		} else {
			printBench(stdout, rep)
		}
	}
	if *plotOut != "" {
		title := fmt.Sprintf("%s step on %s", ds.Name, desc)
		if err := report.PlotSplit(title, splits, *plotOut); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", *plotOut)
	}
	if *prof {
		rep := benchReport{Preset: ds.Name, Device: desc, TF32: rf.cuda.tf32, TF32x3: rf.cuda.options().TF32x3, Date: time.Now().UTC().Format(time.DateOnly)}
		return benchProfile(be, ds, cfg, rep, *steps, *warmup, *asJSON, stdout, stderr)
	}
	return nil
}

// parseModes reads --mode.
func parseModes(s string) ([]string, error) {
	if s == "both" {
		return []string{"eager", "replay"}, nil
	}
	modes := strings.Split(s, ",")
	for _, m := range modes {
		if m != "eager" && m != "replay" {
			return nil, fmt.Errorf("--mode %s: want eager, replay or both", quoted(s))
		}
	}
	return modes, nil
}

// benchMode measures one driver on a fresh trainer and fills rep.
func benchMode(be backend.Backend, ds *dataset.Dataset, cfg train.Config, rep *benchReport, steps, warmup int, ropt train.ReplayOptions) error {
	ms, hasMem := be.(backend.MemoryStats)
	if hasMem {
		ms.ResetPeak()
	}
	fdt, err := parseFeatureDType(rep.FeatureDType)
	if err != nil {
		return err
	}
	tr, err := train.New(be, ds, cfg, train.Options{Device: rep.Device, Replay: rep.Mode == "replay", FeatureDType: fdt})
	if err != nil {
		return err
	}
	defer tr.Close()
	var hooks train.BenchHooks
	if c, ok := cudaOf(be); ok {
		hooks.Before = c.ResetStats
		hooks.After = func() {
			st, n := c.Stats(), float64(steps)
			rep.Launches, rep.Gemms, rep.HostSyncs = float64(st.Launches)/n, float64(st.Gemms)/n, float64(st.HostSyncs)/n
		}
	}
	if rep.Mode == "replay" {
		// The floor is counted at the largest observed sizes: replay keeps
		// per-step counts on the device.
		res, st, err := tr.BenchReplay(steps, warmup, ropt, hooks)
		if err != nil {
			return err
		}
		rep.BenchResult, rep.Replay = res, st
		rep.GraphLaunches = float64(st.Launches) / float64(res.Steps)
		if st.WallS > 0 && st.BusyS > 0 {
			rep.Busy = st.BusyS / st.WallS
		}
		rep.Blocks = meanSizes(st.Envelope.Ideal)
	} else if rep.BenchResult, err = tr.Bench(steps, warmup, hooks); err != nil {
		return err
	}
	if hasMem {
		rep.PeakBytes = ms.PeakBytes()
		if rep.Replay != nil {
			ideal := rep.PeakBytes - rep.Replay.Envelope.Bytes + rep.Replay.Envelope.IdealBytes
			rep.PeakOverIdeal = float64(rep.PeakBytes) / float64(ideal)
		}
	}
	if len(rep.Blocks) > 0 && rep.InputRows == 0 {
		rep.InputRows = rep.Blocks[0].Src
	}
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
	if c, ok := cudaOf(be); ok {
		if p := c.Peak(); p.TensorTFLOPS > 0 && p.BandwidthGBs > 0 {
			rep.Peak = &p
			rep.PeakFloorSeconds = rep.GFLOP/(p.TensorTFLOPS*1e3) + rep.GB/p.BandwidthGBs
		}
	}
	return nil
}

// meanSizes turns capacities into block sizes for the floor (replay has no
// per-step counts on the host; it uses the largest observed sizes).
func meanSizes(caps []nn.Caps) []train.BlockSize {
	out := make([]train.BlockSize, len(caps))
	for i, c := range caps {
		out[i] = train.BlockSize{Dst: float64(c.Dst), Edges: float64(c.Edges), Src: float64(c.Src)}
	}
	return out
}

// gemmRate measures the rate (GFLOP/s) of the backend's Linear op, the
// product the step uses (with the backend's precision options), at the
// bottom layer's shape: [m, k] x [k, n], ten products per host sync.
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
	cnt, err := be.Upload([]int32{int32(m)})
	if err != nil {
		return 0, err
	}
	defer be.Free(cnt)
	rows := backend.Count{Buf: cnt, Cap: m}
	const batch = 10
	run := func() error {
		for range batch {
			be.Linear(bufs[0], rows, bufs[1], k, n, bufs[2], false)
		}
		return be.Sync()
	}
	if err := run(); err != nil {
		return 0, err
	}
	reps := 0
	start := time.Now()
	for time.Since(start) < 300*time.Millisecond || reps < 3 {
		if err := run(); err != nil {
			return 0, err
		}
		reps += batch
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
	if r.Replay == nil {
		fmt.Fprintf(w, "  split per step    sample %s, gather %s, train %s, idle %s (stage-synced pass)\n", ms(r.SampleS), ms(r.GatherS), ms(r.TrainS), ms(r.IdleS))
		fmt.Fprintf(w, "  sampled edges     %.0f per step, %.2f M/s\n", r.EdgesPerStep, r.EdgesPerS/1e6)
		fmt.Fprintf(w, "  input rows        %.0f per step\n", r.InputRows)
	} else {
		fmt.Fprintf(w, "  input rows        %.0f at most per step\n", r.InputRows)
	}
	fmt.Fprintf(w, "  matmul            %.1f GFLOP/s at %s\n", r.MatmulGFLOPS, r.MatmulShape)
	fmt.Fprintf(w, "  bandwidth         %.0f GB/s (row copy)\n", r.BandwidthGBs)
	fmt.Fprintf(w, "  floor             %s per step (%.1f GFLOP, %.2f GB); efficiency %.0f%%\n", ms(r.FloorSeconds), r.GFLOP, r.GB, 100*r.Efficiency)
	if r.Peak != nil {
		fmt.Fprintf(w, "  floor at peak     %s per step (dense 16-bit tensor rate %.0f TFLOP/s, memory %.0f GB/s: the device's attributes); the step is %.1fx it\n",
			ms(r.PeakFloorSeconds), r.Peak.TensorTFLOPS, r.Peak.BandwidthGBs, r.StepSeconds/r.PeakFloorSeconds)
	}
	if r.Launches > 0 {
		fmt.Fprintf(w, "  per step          %.0f kernel launches, %.0f GEMMs, %.0f host syncs\n", r.Launches, r.Gemms, r.HostSyncs)
	}
	if r.PeakBytes > 0 {
		fmt.Fprintf(w, "  peak memory       %.1f MiB\n", float64(r.PeakBytes)/(1<<20))
	}
	if rp := r.Replay; rp != nil {
		fmt.Fprintf(w, "  replay            %d captures, %d overflows, %d launches; busy %.1f%%\n", rp.Captures, rp.Overflows, rp.Launches, 100*r.Busy)
		fmt.Fprintf(w, "  envelope          %.1f MiB against %.1f MiB ideal; peak %.2fx the ideal peak\n",
			float64(rp.Envelope.Bytes)/(1<<20), float64(rp.Envelope.IdealBytes)/(1<<20), r.PeakOverIdeal)
	}
	if r.SpeedupOverEager > 0 {
		fmt.Fprintf(w, "  speed-up          %.2fx over eager (same run)\n", r.SpeedupOverEager)
	}
	fmt.Fprintf(w, "  loss              %.4f (mean of measured steps)\n", r.Loss)
}

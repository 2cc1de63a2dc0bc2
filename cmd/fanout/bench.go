package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/report"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/job"
)

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
	modes, err := job.ParseBenchModes(*mode)
	if err != nil {
		return err
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
	if rf.deviceCounts != "" && !setFlags(fs)["epochs"] {
		cfg.Epochs = 3
	}
	var splits []report.Split
	b := job.Bench{Job: rf.job(cfg, train.Options{}, stderr), Modes: modes, Steps: *steps, Warmup: *warmup, DeviceCounts: rf.deviceCounts, Profile: *prof}
	b.OnMode = func(rep job.BenchReport) error {
		splits = append(splits, report.Split{Label: rep.Mode, Sample: rep.SampleS, Gather: rep.GatherS, Train: rep.TrainS, Idle: rep.IdleS, Step: rep.StepSeconds})
		printJSONOr(stdout, *asJSON, rep, printBench)
		if len(splits) < len(modes) || *plotOut == "" {
			return nil
		}
		title := fmt.Sprintf("%s step on %s", rep.Preset, rep.Device)
		if err := report.PlotSplit(title, splits, *plotOut); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", *plotOut)
		return nil
	}
	b.OnDevices = func(rep job.DevicesReport) error {
		printJSONOr(stdout, *asJSON, rep, printDevices)
		return nil
	}
	b.OnProfile = func(pr job.ProfileReport) error {
		printJSONOr(stdout, *asJSON, pr, printProfile)
		return nil
	}
	return settingError(job.RunBench(ctx, b))
}

// printJSONOr prints r as one JSON line, or with print.
func printJSONOr[R any](w io.Writer, asJSON bool, r R, print func(io.Writer, R)) {
	if !asJSON {
		print(w, r)
		return
	}
	b, _ := json.Marshal(r)
	fmt.Fprintln(w, string(b))
}

// printBench prints one mode's measurement.
func printBench(w io.Writer, r job.BenchReport) {
	ms := func(s float64) string { return fmt.Sprintf("%.2f ms", s*1e3) }
	fmt.Fprintf(w, "preset %s on %s, %s mode (%s)\n", r.Preset, r.Device, r.Mode, r.Date)
	fmt.Fprintf(w, "  generation        %.1f s (not part of the epoch)\n", r.GenSeconds)
	fmt.Fprintf(w, "  epoch             %.2f s (%d steps x %s, extrapolated from %d steps)\n", r.EpochSeconds, r.EpochSteps, ms(r.StepSeconds), r.Steps)
	if r.Replay == nil {
		fmt.Fprintf(w, "  split per step    sample %s, gather %s, train %s, idle %s (stage-synced pass)\n", ms(r.SampleS), ms(r.GatherS), ms(r.TrainS), ms(r.IdleS))
		fmt.Fprintf(w, "  sampled edges     %.0f per step, %.2f M/s\n", r.EdgesPerStep, r.EdgesPerS/1e6)
		fmt.Fprintf(w, "  input rows        %.0f per step\n", r.InputRows)
	} else if r.InputRows > 0 { // a typed replay keeps no observed sizes
		fmt.Fprintf(w, "  input rows        %.0f at most per step\n", r.InputRows)
	}
	fmt.Fprintf(w, "  matmul            %.1f GFLOP/s at %s\n", r.MatmulGFLOPS, r.MatmulShape)
	fmt.Fprintf(w, "  bandwidth         %.0f GB/s (row copy)\n", r.BandwidthGBs)
	if r.FloorSeconds == 0 {
		fmt.Fprintf(w, "  floor             not modelled for typed models\n")
	} else {
		fmt.Fprintf(w, "  floor             %s per step (%.1f GFLOP, %.2f GB); efficiency %.0f%%\n", ms(r.FloorSeconds), r.GFLOP, r.GB, 100*r.Efficiency)
	}
	if r.Peak != nil && r.PeakFloorSeconds > 0 {
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

// printDevices prints one device count's measurement (bench --devices).
func printDevices(w io.Writer, rep job.DevicesReport) {
	fmt.Fprintf(w, "%d device(s): epoch %.3f s (mean of %d, training only), %.1f steps/s, speed-up %.2fx, test accuracy %.4f\n",
		rep.Devices, rep.EpochS, rep.Epochs, rep.StepsPerS, rep.Speedup, rep.TestAcc)
	if rep.Cut > 0 {
		fmt.Fprintf(w, "  partition: edge cut %.3f, balance %.3f; lists read %.1f%% locally, %.1f%% from replicas, %.1f%% from peers\n",
			rep.Cut, rep.Balance, 100*rep.Local, 100*rep.Replica, 100*rep.Remote)
	}
	if rep.FeatureBytes > 0 {
		fmt.Fprintf(w, "  features: sharded, at most %.1f MiB of rows per device; rows gathered %.1f%% locally, %.1f%% from replicas, %.1f%% from peers, %.1f%% kept from the previous batch\n",
			float64(rep.FeatureBytes)/(1<<20), 100*rep.FeatureLocal, 100*rep.FeatureReplica, 100*rep.FeatureRemote, 100*rep.FeatureReused)
	}
	if x := rep.Exchange; x != nil {
		fmt.Fprintf(w, "  features exchanged, per step (all ranks): rows own %.0f, same host %.0f, other hosts %.0f, kept %.0f; same host %.1f KiB (%.1f KiB on the wire), other hosts %.1f KiB (%.1f KiB on the wire)\n",
			x.Own, x.SameHost, x.OtherHost, x.Reused, x.LiveSameKiB, x.WireSameKiB, x.LiveOtherKiB, x.WireOtherKiB)
	}
}

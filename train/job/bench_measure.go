package job

import (
	"fmt"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
)

// BenchReport is what bench measured of one mode (its --json line).
type BenchReport struct {
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

// benchMode measures one driver on a fresh trainer and fills rep.
func benchMode(be backend.Backend, ds *dataset.Dataset, cfg train.Config, mode train.Mode, rep *BenchReport, steps, warmup int, ropt train.ReplayOptions) error {
	ms, hasMem := be.(backend.MemoryStats)
	if hasMem {
		ms.ResetPeak()
	}
	fdt, err := ParseFeatureDType(rep.FeatureDType)
	if err != nil {
		return err
	}
	task, err := NewTask(cfg)
	if err != nil {
		return err
	}
	tr, err := train.New(be, ds, cfg, train.Options{Device: rep.Device, Mode: mode, FeatureDType: fdt, Task: task})
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
	if mode == train.Replay {
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
	if cfg.TypedModel() {
		return nil // the floor's model of a step is the one-type layers'
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

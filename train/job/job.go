// Package job runs one job of the command line: it opens the device or
// devices, loads the dataset, fits the batch, places the data, wraps the
// backend for capture and runs the driver the job's train.Mode names, on one
// device (eager, replay, hybrid), on several devices of this process, or
// as one process of a job started by a launcher, for whichever task the
// configuration names (train.Task: one path for every task). Run trains;
// RunBench measures; RunEval evaluates a checkpoint. What a job says while
// it runs goes to Job.Log; the command line only builds a Job and prints
// what Run returns.
package job

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/cluster"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// AllDevices as Job.Devices asks for every device: every GPU, or one CPU
// device per two cores.
const AllDevices = -1

// Source is where a job's dataset comes from: a directory (Data), or a
// preset generated in memory.
type Source struct {
	Data, Preset string
	Seed         uint64 // the preset's generator seed (0: 1)
	FeatDim      int    // the preset's feature width, when set (> 0)
	// Labels is a one-type preset's labelling (rmat.Options.Labels): ""
	// or neighbours as today, community for planted communities.
	Labels string
	// Open are the options Data is opened with (the hybrid mode's disk
	// tier leaves the features on disk: hybridSource).
	Open dataset.OpenOptions
}

// CUDA are the GPU options of a job.
type CUDA struct {
	LibDir, CacheDir string
	TF32, TF32x3     bool
	Deterministic    bool
	// NCCLAllReduce sums a process's GPUs' gradients with NCCL instead of
	// the kernels that read the peers' memory (cuda.PeerGroup).
	NCCLAllReduce bool
}

// Options are the CUDA backend's options (TF32, the faster single-pass
// products, overrides TF32x3).
func (c CUDA) Options() cuda.Options {
	return cuda.Options{LibDir: c.LibDir, CacheDir: c.CacheDir, TF32: c.TF32, TF32x3: c.TF32x3 && !c.TF32, Deterministic: c.Deterministic}
}

// HybridSettings are the hybrid mode's: the GPU budget, the cache and the
// CPU-computed hot vertices.
type HybridSettings struct {
	GPUMemory  string  // a size (parsed by ParseSize); "" for what the GPU has free
	CacheRows  int     // -1: as many as the budget leaves
	HotSpec    string  // the hot ratio as given (messages)
	HotRatio   float64 // the fraction of hot vertices (0 with HotAuto until measured)
	HotAuto    bool    // the ratio is chosen by a measurement
	Staleness  int
	SuperBatch int
	HotOutputs bool // the CPU computes layer 0's outputs instead of its inputs
	FetchAhead bool // the host tier's rows gathered a step ahead (hybrid.Options.FetchAhead)
	Lookahead  int  // a disk tier's gathers started this many steps ahead (hybrid.Options.Lookahead)
	// HostBand is the host memory of the band of rows ranked after the
	// cache's (a size, parsed by ParseSize; "" for hybrid.DefaultBand, 0
	// for none: hybrid.Options.Band).
	HostBand string
	// HostMemory caps the host tier (a size, parsed by ParseSize; "" for
	// the whole table): larger features stay in the dataset's feat.npy,
	// read when a step needs them (hybrid.Options.HostMemory).
	HostMemory string
	// DiskBuffered reads the rows left on disk through the page cache
	// instead of with O_DIRECT (hybrid.Options.DiskBuffered).
	DiskBuffered bool
	// StageHost copies the host tier's rows a step needs into the disk
	// tier's staging on the host, so the GPU reads them sequentially
	// (hybrid.Options.StageHost); only with features on disk.
	StageHost bool
}

// Placement is how several devices hold the graph and the features.
type Placement struct {
	Replicate      string // the replicas' budget (ReplicateBytes); "" for the default
	ShardFeatures  string // auto, on, off or hosts
	NoFeatureReuse bool
	RanksPerHost   int // with ShardFeatures hosts (0: the launcher's, or all)
}

// Job is one training job as the command line describes it.
type Job struct {
	Config  train.Config
	Options train.Options // the run directory, progress; Device is set by Run
	Source  Source
	Device  string // auto, cpu, cuda or cuda:N
	Threads int    // CPU threads (0: all cores)
	CUDA    CUDA
	Mode    train.Mode
	// Devices trains data-parallel on this many devices of this process
	// (AllDevices: every one); 0 trains on one device, no group.
	Devices      int
	GlobalBatch  int    // the seeds of one step over a group (0: Config.Batch per device)
	BatchGiven   bool   // the batch was given, not a default (FitBatch's note says so)
	ModelGiven   bool   // the model was given, not a default (a typed dataset then takes rsage)
	FeatureDType string // float32 or bfloat16, as resolved for the run
	Replay       train.ReplayOptions
	Hybrid       HybridSettings
	Placement    Placement
	// BottomDefault: Config.BottomProducts is the GPU default, not asked
	// for; the hybrid mode may drop it.
	BottomDefault bool
	// BottomGiven: --bottom-products was given; otherwise the hybrid mode
	// takes the GPU default once it has chosen no hot vertices.
	BottomGiven bool
	// Outputs are the files to write from the best model once it trained.
	Outputs Outputs
	// Launch is the launcher's environment when this process is one rank
	// of a job of several processes.
	Launch *cluster.Launch
	// Log hears what the job says as it runs (stderr).
	Log io.Writer
	// Progress, when set, makes a progress display for long work
	// (generating a preset): update hears a stage, done of total.
	Progress func(title string) (update func(stage string, done, total int64), done func())
}

// ErrInterrupted is returned when a cancelled job stopped (and said so);
// the command exits with the signal's status.
var ErrInterrupted = errors.New("job interrupted")

// Run trains the job: as one process of a launcher's job, on several
// devices, or on one. The summary is nil on a process that is not rank 0.
func Run(ctx context.Context, j Job) (*train.Summary, error) {
	if j.Log == nil {
		j.Log = io.Discard
	}
	if err := j.checkTask(); err != nil {
		return nil, err
	}
	if j.Launch != nil {
		return runProcesses(ctx, &j)
	}
	if j.Devices == AllDevices {
		n, err := j.allDevices()
		if err != nil {
			return nil, fmt.Errorf("devices: %w", err)
		}
		j.Devices = n
	}
	if j.Devices > 0 {
		return runDevices(ctx, &j)
	}
	return runOne(ctx, &j)
}

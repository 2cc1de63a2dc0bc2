// Package simulate simulates a data-parallel job's sampling and placement on
// the CPU, without training and without a GPU: for every rank and step it
// samples the rank's share of the global batch exactly as training does
// (the seeds of train's epoch layout, package sample's sampler and keys)
// and counts, with the placements training computes (graph.Partition,
// graph.Replicated, featstore.PlaceHosts), where each neighbour list and
// each input feature row would be read: locally, from a replica, from a GPU
// of the same host, from another host, or from the rows kept from the
// previous step; and what the all-to-alls of exchanged rows would put on
// the wire. Model turns those figures and a single GPU's step time into a
// predicted epoch (model.go).
//
// Counts match the device counters of train/multigpu (Topology.Reads,
// Features.Reads, Exchange.Counts) for the same flags and seed; the tests
// check it on tiny. No feature row is read or copied: rows are counted by
// owner, so a simulation of 64 ranks holds one partition per layout and a
// few arrays per vertex.
package simulate

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/train"
)

// Chunks says how the simulated all-to-alls size their chunks.
type Chunks string

const (
	// ReplayChunks: as the replay driver sizes them: the most rows one of
	// the first 16 batches (after the first) asks of one peer, over the
	// ranks, times the margin; a step that asks more grows them to its
	// need times the margin.
	ReplayChunks Chunks = "replay"
	// EagerChunks: as the eager driver: one row at first, grown after a
	// gather that asked more (to its need times the margin, at least one
	// more row) and the gather made again, while below the capacity.
	EagerChunks Chunks = "eager"
)

// Config is a simulated job.
type Config struct {
	Hosts   int `json:"hosts"`
	Devices int `json:"devices_per_host"`
	// TopoRanks is how many consecutive ranks share one partitioned
	// topology read over peer memory (0: a host's devices). Training in
	// one process partitions over all of its devices.
	TopoRanks int `json:"topology_ranks"`
	// Batch is the global batch: the seeds of one step over all ranks
	// (a multiple of the ranks; rank r takes the r-th slice).
	Batch   int    `json:"global_batch"`
	Fanouts []int  `json:"fanouts"`
	Seed    uint64 `json:"seed"`
	Steps   int    `json:"steps"` // steps simulated, of every rank
	// Replicate is the bytes of neighbour lists copied on every rank, the
	// highest-degree vertices' first (train's --replicate); below zero the
	// whole graph on every rank.
	Replicate int64    `json:"replicate_bytes"`
	Features  Features `json:"features"`
	Reuse     bool     `json:"feature_reuse"`
	Chunks    Chunks   `json:"chunks"`
	Margin    float64  `json:"margin"`  // the drivers' envelope margin (train.DefaultMargin)
	Threads   int      `json:"threads"` // ranks simulated at once (0: all cores)
}

// Ranks is the job's size.
func (c *Config) Ranks() int { return c.Hosts * c.Devices }

// Lists are a rank's neighbour-list reads of one step (every hop), by
// where the list lived, and the bytes read from peers (32-byte sectors:
// one per sampled position, at most the list's).
type Lists struct {
	Local       int64 `json:"local"`
	Replica     int64 `json:"replica"`
	Remote      int64 `json:"remote"`
	RemoteBytes int64 `json:"remote_bytes"`
}

// Rows are a rank's input feature rows of one step by where they came
// from: held (Local: its own; Replica: copies of replicated rows), read
// from a GPU of the same host (peer memory, or an all-to-all within the
// host), from another host, or kept from the previous step.
type Rows struct {
	Local     int64 `json:"local"`
	Replica   int64 `json:"replica"`
	SameHost  int64 `json:"same_host"`
	OtherHost int64 `json:"other_host"`
	Reused    int64 `json:"reused"`
}

// RankStep is one rank's figures of one step.
type RankStep struct {
	Seeds int   `json:"seeds"`
	Edges int64 `json:"sampled_edges"` // every hop: the proxy of the step's work
	Lists Lists `json:"lists"`
	Rows  Rows  `json:"rows"`
	// Need is the most rows the rank asked of one peer (exchanged rows).
	Need int `json:"need,omitempty"`
}

// Step is one step of every rank.
type Step struct {
	Epoch int        `json:"epoch"`
	Step  int        `json:"step"`
	Ranks []RankStep `json:"ranks"`
	// Chunk is the rows of each peer's chunk in the step's all-to-alls
	// (exchanged rows), and Gathers how many gathers it took (more than
	// one where eager chunks grew).
	Chunk   int `json:"chunk_rows,omitempty"`
	Gathers int `json:"gathers,omitempty"`
	// Imbalance is the slowest rank's sampled edges over the ranks' mean.
	Imbalance float64 `json:"imbalance"`
}

// Totals are the counters as training's devices keep them, added over the
// ranks: list reads (multigpu.Topology.Reads), rows read through peer
// memory (multigpu.Features.Reads), and exchanged rows
// (multigpu.Exchange.Counts).
type Totals struct {
	Lists    backend.ReadCounts       `json:"lists"`
	Rows     backend.ReadCounts       `json:"rows"`
	Exchange featstore.ExchangeCounts `json:"exchange"`
}

// Result is a simulation.
type Result struct {
	Config     Config `json:"config"`
	Dataset    string `json:"dataset"`
	Vertices   int64  `json:"vertices"`
	Edges      int64  `json:"edges"`
	FeatDim    int    `json:"feat_dim"`
	TrainSeeds int    `json:"train_seeds"`
	EpochSteps int    `json:"epoch_steps"` // steps of an epoch at the global batch
	Replicated int    `json:"replicated_vertices"`
	Steps      []Step `json:"steps"`
	Totals     Totals `json:"totals"`
}

// Runner simulates jobs on one dataset, sharing the partitions that
// several jobs ask for (graph.Partition depends only on the graph and the
// part count).
type Runner struct {
	ds    *dataset.Dataset
	parts partitions
}

// NewRunner simulates jobs on ds.
func NewRunner(ds *dataset.Dataset) *Runner {
	return &Runner{ds: ds, parts: partitions{g: ds.Graph}}
}

// Run simulates cfg on ds.
func Run(ds *dataset.Dataset, cfg Config) (*Result, error) { return NewRunner(ds).Run(cfg) }

// Run simulates cfg.
func (r *Runner) Run(cfg Config) (*Result, error) {
	if err := r.check(&cfg); err != nil {
		return nil, err
	}
	pl, err := place(r.ds.Graph, &cfg, &r.parts)
	if err != nil {
		return nil, err
	}
	return run(r.ds, cfg, pl)
}

// check fills cfg's defaults and refuses a job that cannot run on the
// runner's graph or is past the limits of a simulation (limits.go).
func (r *Runner) check(cfg *Config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	if err := r.ds.Graph.Narrow(); err != nil {
		return err
	}
	return checkBudget(r.ds.Graph, cfg)
}

// check fills defaults and rejects a job that cannot run.
func (c *Config) check() error {
	if err := CheckSize(c.Hosts, c.Devices, c.Steps); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if c.TopoRanks <= 0 {
		c.TopoRanks = c.Devices
	}
	if c.Ranks()%c.TopoRanks != 0 {
		return fmt.Errorf("simulate: %d ranks do not make groups of %d", c.Ranks(), c.TopoRanks)
	}
	if c.Batch < 1 || c.Batch%c.Ranks() != 0 {
		return fmt.Errorf("simulate: a global batch of %d seeds does not split evenly over %d ranks", c.Batch, c.Ranks())
	}
	if len(c.Fanouts) == 0 {
		return errors.New("simulate: no fanouts")
	}
	if c.Features == "" {
		c.Features = Whole
	}
	if c.Chunks == "" {
		c.Chunks = ReplayChunks
	}
	if c.Margin < 1 {
		c.Margin = train.DefaultMargin
	}
	if c.Threads <= 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	return nil
}

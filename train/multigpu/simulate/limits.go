package simulate

import (
	"fmt"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// The limits of one simulation, checked before it samples anything. Every
// rank's sampling runs on this machine's cores, every rank's input rows
// of a step are held at once (for the next step's reuse), and every
// rank's figures of every step are kept in the Result.
const (
	// MaxRanks is the largest job simulated: 512 hosts of 8 GPUs, eight
	// times the ladder's largest (8x8).
	MaxRanks = 4096
	// MaxRankSteps bounds ranks × steps: a RankStep (96 bytes) each in
	// the Result, 96 MiB at the bound, and a line each with --per-rank.
	MaxRankSteps = 1 << 20
	// MaxSampledEdges bounds the edges the ranks' steps may sample by the
	// sampler's envelope (sample.Envelope at the per-rank batch, about 5
	// times what products-sim's steps sample): 1.7e10, about 3e9 sampled,
	// at some 15 million edges a second per core (measured on tiny) a
	// minute or two on a few cores. The default ladder on products-sim
	// (20 steps, 1024 seeds per device, up to 64 ranks) is 1.4e9.
	MaxSampledEdges = 1 << 34
	// MaxHeldBytes bounds the ranks' input rows held at once by the
	// envelope: two int32 ids per row (this step's and the kept ones) for
	// every rank.
	MaxHeldBytes = 4 << 30
)

// CheckSize refuses a job of hosts of devices over steps steps that no
// simulation takes, whatever the dataset: fewer than one of each, more
// than MaxRanks ranks, or more than MaxRankSteps ranks × steps. The
// errors name the values by fanout simulate's flags.
func CheckSize(hosts, devices, steps int) error {
	switch {
	case hosts < 1:
		return fmt.Errorf("hosts: %d, want at least 1", hosts)
	case devices < 1:
		return fmt.Errorf("devices: %d, want at least 1", devices)
	case steps < 1:
		return fmt.Errorf("steps: %d, want at least 1", steps)
	case hosts > MaxRanks || devices > MaxRanks || hosts*devices > MaxRanks:
		return fmt.Errorf("hosts x devices: %d x %d ranks, more than the %d a simulation takes (every rank is sampled on this machine)", hosts, devices, MaxRanks)
	case steps > MaxRankSteps/(hosts*devices):
		return fmt.Errorf("steps: %d steps of %d ranks, more than the %d rank-steps whose figures a simulation keeps (%d steps at this size)",
			steps, hosts*devices, MaxRankSteps, MaxRankSteps/(hosts*devices))
	}
	return nil
}

// checkBudget refuses cfg (checked) on g where its ranks' steps could
// sample more than MaxSampledEdges edges, or hold more than MaxHeldBytes
// of input rows at once, by the sampler's envelope at the per-rank batch.
func checkBudget(g *graph.CSR, cfg *Config) error {
	n := cfg.Ranks()
	b := cfg.Batch / n
	caps := sample.Envelope(g, b, cfg.Fanouts)
	var edges float64
	for _, c := range caps {
		edges += float64(c.Edges)
	}
	sampled := edges * float64(n) * float64(cfg.Steps)
	held := 8 * float64(caps[0].Src) * float64(n)
	fanouts := train.FormatFanouts(cfg.Fanouts)
	switch {
	case sampled > MaxSampledEdges:
		return fmt.Errorf("simulate: %d ranks x %d steps of %d seeds may sample %.3g edges (the sampler's envelope for fanouts %s), more than the %.3g a simulation samples: fewer --steps, --hosts or --devices, or a smaller --batch",
			n, cfg.Steps, b, sampled, fanouts, float64(MaxSampledEdges))
	case held > MaxHeldBytes:
		return fmt.Errorf("simulate: %d ranks of %d seeds may hold %.3g GiB of input rows at once (the sampler's envelope for fanouts %s), more than the %d GiB a simulation holds: fewer --hosts or --devices, or a smaller --batch",
			n, b, held/(1<<30), fanouts, MaxHeldBytes>>30)
	}
	return nil
}

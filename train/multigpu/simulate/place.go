package simulate

import (
	"fmt"

	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
)

// Features is where a job's feature rows live (train's --shard-features).
type Features string

const (
	// Whole: the whole table on every device; every row is read locally.
	Whole Features = "off"
	// Peer: the rows sharded over the devices of each host as the topology
	// (multigpu.PlaceFeatures: the topology's owners and replicas), any
	// other row read in place from the peer that owns it (NVLink); every
	// host holds the whole table.
	Peer Features = "on"
	// Hosts: the rows spread over the job's ranks in hosts
	// (featstore.PlaceHosts: vertices partitioned over the hosts, dealt to
	// a host's ranks in turn), fetched with all-to-alls (hierarchical).
	Hosts Features = "hosts"
	// Flat: the rows partitioned over every rank of the job at once
	// (featstore.PlaceHosts with hosts of one rank), fetched with
	// all-to-alls; a row's level is where its rank really is.
	Flat Features = "flat"
)

// ParseFeatures reads a --shard-features value; auto is decided by the
// caller (it depends on the device's memory).
func ParseFeatures(s string) (Features, error) {
	switch f := Features(s); f {
	case Whole, Peer, Hosts, Flat:
		return f, nil
	}
	return "", fmt.Errorf("shard-features: %q, want on, off, hosts or flat", s)
}

// Exchanged says whether rows are fetched with all-to-alls.
func (f Features) Exchanged() bool { return f == Hosts || f == Flat }

// placement is every rank's view of where lists and rows live: the same
// partitions and replica sets training computes (graph.Partition,
// graph.Replicated, featstore.PlaceHosts), held once for all ranks.
type placement struct {
	// Topology: the ranks of one group (TopoRanks consecutive ranks)
	// partition the lists (listOwner is the group index owning each
	// vertex; nil: the whole graph on every device) and keep copies of
	// the replicated vertices' lists.
	listOwner []int32
	replica   []bool // per vertex: lists (and, with Peer, rows) on every rank
	replicas  int    // how many vertices are replicated
	// Rows: rowOwner is the rank (Peer: the group index) holding each
	// vertex's row; rowReplica its rows held by every rank (Hosts, Flat;
	// Peer shares replica).
	rowOwner   []int32
	rowReplica []bool
}

// partitions caches graph.Partition by part count: it depends only on the
// graph, and several placements may ask for the same count.
type partitions struct {
	g    *graph.CSR
	done map[int][]int32
}

func (p *partitions) get(parts int) ([]int32, error) {
	if o, ok := p.done[parts]; ok {
		return o, nil
	}
	o, err := graph.Partition(p.g, parts)
	if err != nil {
		return nil, err
	}
	if p.done == nil {
		p.done = map[int][]int32{}
	}
	p.done[parts] = o
	return o, nil
}

// place lays lists and rows out as training does for cfg: the topology
// as multigpu.PlaceTopology over each group of cfg.TopoRanks ranks
// (replicate bytes of lists copied on every rank; below zero the whole
// graph on every rank and no partition), the rows as multigpu.PlaceFeatures
// (Peer: the topology's owners and replicas, or a partition of their own
// when the whole graph is everywhere) or featstore.PlaceHosts (Hosts,
// Flat: the replicated vertices by the same budget).
func place(g *graph.CSR, cfg *Config, parts *partitions) (*placement, error) {
	pl := &placement{}
	n := g.NumNodes
	var replicated []int32
	switch {
	case cfg.Replicate < 0:
		replicated = graph.Replicated(g, 4*g.NumEdges()+1) // every vertex, as train's "all"
	default:
		replicated = graph.Replicated(g, cfg.Replicate)
	}
	if cfg.Replicate >= 0 && cfg.TopoRanks > 1 {
		o, err := parts.get(cfg.TopoRanks)
		if err != nil {
			return nil, err
		}
		pl.listOwner = o
		pl.replica = make([]bool, n)
		for _, v := range replicated {
			pl.replica[v] = true
		}
		pl.replicas = len(replicated)
	}
	switch cfg.Features {
	case Whole:
	case Peer:
		if pl.listOwner != nil {
			pl.rowOwner, pl.rowReplica = pl.listOwner, pl.replica
			break
		}
		o, err := parts.get(cfg.TopoRanks) // PlaceFeatures' own partition, no replicas
		if err != nil {
			return nil, err
		}
		pl.rowOwner = o
	case Hosts, Flat:
		perHost := cfg.Devices
		if cfg.Features == Flat {
			perHost = 1
		}
		l, err := featstore.PlaceHosts(g, cfg.Ranks(), perHost, replicated)
		if err != nil {
			return nil, err
		}
		pl.rowOwner = l.Owner
		pl.rowReplica = make([]bool, n)
		for _, v := range l.Replicated {
			pl.rowReplica[v] = true
		}
	default:
		return nil, fmt.Errorf("simulate: features %q", cfg.Features)
	}
	return pl, nil
}

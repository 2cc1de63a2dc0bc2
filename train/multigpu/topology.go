package multigpu

import (
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
)

// Topology is the graph of a group spread over its ranks' memories (after
// HyDRA): the vertices are partitioned (graph.Partition), each rank holds
// the neighbour lists of the vertices it owns plus a copy of the lists of
// the highest-degree vertices (graph.Replicated, under a byte budget), and
// every rank samples through a pointer table that finds any vertex's list
// where it lives: its own memory, its replica, or a peer's memory read in
// place (backend.PeerGraphs). Sampling draws from every list exactly as
// from the whole graph, so a seed's neighbourhood does not depend on the
// rank or the partition.
type Topology struct {
	Owner      []int32              // the rank owning each vertex
	Replicated []int32              // vertices whose lists every rank keeps
	Stats      graph.PartitionStats // per rank: vertices and edges owned; edge cut; balance
	ListBytes  []int64              // per rank: bytes of lists it holds (own + replicas)
	pgs        []backend.PeerGraphs
	graphs     []backend.Graph
}

// PlaceTopology partitions ds's graph over the ranks, uploads every rank's
// lists to its backend and sets each rank's Options.Graph to its pointer
// table over all of them. replicate is the bytes of lists every rank
// copies (the highest-degree vertices' first). It fails when a backend has
// no PeerGraphs or cannot read a peer's memory; the caller may then keep
// the whole graph on every rank.
func PlaceTopology(ds *dataset.Dataset, ranks []Rank, replicate int64) (*Topology, error) {
	n := len(ranks)
	if n == 0 {
		return nil, errors.New("multigpu: no ranks")
	}
	g := ds.Graph
	owner, err := graph.Partition(g, n)
	if err != nil {
		return nil, err
	}
	t := &Topology{Owner: owner, Stats: g.PartitionStats(owner, n), Replicated: graph.Replicated(g, replicate)}
	for i, r := range ranks {
		pg := backend.PeerGraphsOf(r.Backend)
		if pg == nil {
			return nil, fmt.Errorf("device %d (%s) cannot sample from lists spread over devices", i, r.Backend.Name())
		}
		t.pgs = append(t.pgs, pg)
	}
	replica := make([]bool, g.NumNodes)
	for _, v := range t.Replicated {
		replica[v] = true
	}
	// Rank r's lists: first the vertices it owns, then its replicas of
	// the others' (pos is a vertex's place in its owner's lists).
	own := make([][]int32, n)
	pos := make([]int32, g.NumNodes)
	for v, p := range owner {
		pos[v] = int32(len(own[p]))
		own[p] = append(own[p], int32(v))
	}
	lists := make([]backend.Lists, n)
	replicaAt := make([][]int32, n) // per rank, per vertex: its replica's index, or -1
	for r := range n {
		ids := append([]int32(nil), own[r]...)
		at := make(map[int32]int32, len(t.Replicated))
		for _, v := range t.Replicated {
			if owner[v] != int32(r) {
				at[v] = int32(len(ids))
				ids = append(ids, v)
			}
		}
		var bytes int64
		for _, v := range ids {
			bytes += 4 * g.Degree(int64(v))
		}
		t.ListBytes = append(t.ListBytes, bytes)
		if lists[r], err = t.pgs[r].UploadLists(g, ids); err != nil {
			return nil, fmt.Errorf("device %d: %w", r, err)
		}
		replicaAt[r] = tableOf(at, g.NumNodes)
	}
	for r := range n {
		at, index, kind := make([]int32, g.NumNodes), make([]int32, g.NumNodes), make([]uint8, g.NumNodes)
		for v := range g.NumNodes {
			p := owner[v]
			switch {
			case p == int32(r):
				at[v], index[v], kind[v] = p, pos[v], backend.ListLocal
			case replica[v]:
				at[v], index[v], kind[v] = int32(r), replicaAt[r][v], backend.ListReplica
			default:
				at[v], index[v], kind[v] = p, pos[v], backend.ListRemote
			}
		}
		pgr, err := t.pgs[r].PeerGraph(g.NumNodes, lists, at, index, kind)
		if err != nil {
			return nil, fmt.Errorf("device %d: %w", r, err)
		}
		t.graphs = append(t.graphs, pgr)
		ranks[r].Options.Graph = pgr
	}
	return t, nil
}

// tableOf spreads a sparse vertex → index map over all n vertices (-1
// elsewhere).
func tableOf(m map[int32]int32, n int64) []int32 {
	t := make([]int32, n)
	for v := range t {
		t[v] = -1
	}
	for v, i := range m {
		t[v] = i
	}
	return t
}

// Reads are the list reads the ranks' sampling counted, summed.
func (t *Topology) Reads() (backend.ReadCounts, error) {
	var sum backend.ReadCounts
	for r, g := range t.graphs {
		c, err := t.pgs[r].GraphReads(g)
		if err != nil {
			return sum, fmt.Errorf("device %d: %w", r, err)
		}
		sum = sum.Plus(c)
	}
	return sum, nil
}

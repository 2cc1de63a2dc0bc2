package featstore

import (
	"fmt"

	"github.com/fanout-gnn/fanout/graph"
)

// Layout places the rows of a table over the ranks of a job grouped into
// hosts (ranks h·PerHost ... (h+1)·PerHost-1 are host h's, as launchers
// number them): the vertices are partitioned over the hosts
// (graph.Partition, so that few sampled neighbours cross hosts), a host's
// vertices are dealt to its ranks in turn in id order, and a few rows
// (Replicated: the highest-degree vertices, read most) are held by every
// rank. Every rank computes the same layout from the same graph.
type Layout struct {
	Ranks, PerHost int
	Owner          []int32 // per vertex: the rank holding its row
	Replicated     []int32 // vertices whose rows every rank holds
}

// PlaceHosts lays n's rows out over ranks in hosts of perHost, with the
// rows of replicated on every rank.
func PlaceHosts(g *graph.CSR, ranks, perHost int, replicated []int32) (*Layout, error) {
	if ranks < 1 || perHost < 1 || ranks%perHost != 0 {
		return nil, fmt.Errorf("featstore: %d ranks do not make hosts of %d", ranks, perHost)
	}
	hosts := ranks / perHost
	host := make([]int32, g.NumNodes)
	if hosts > 1 {
		var err error
		if host, err = graph.Partition(g, hosts); err != nil {
			return nil, err
		}
	}
	owner := make([]int32, g.NumNodes)
	next := make([]int32, hosts) // the next local rank of each host
	for v, h := range host {
		owner[v] = h*int32(perHost) + next[h]
		next[h] = (next[h] + 1) % int32(perHost)
	}
	for _, v := range replicated {
		if v < 0 || int64(v) >= g.NumNodes {
			return nil, fmt.Errorf("featstore: replicated vertex %d outside the graph of %d", v, g.NumNodes)
		}
	}
	return &Layout{Ranks: ranks, PerHost: perHost, Owner: owner, Replicated: replicated}, nil
}

// HighestDegree is the k vertices of highest degree (ties by id), the
// rows worth holding on every rank.
func HighestDegree(g *graph.CSR, k int) []int32 {
	if k <= 0 {
		return nil
	}
	all := graph.Replicated(g, 4*g.NumEdges()+1) // a budget for every list: every vertex, by degree
	return all[:min(k, len(all))]
}

// Where is rank's table (backend.Exchange.Where): for each vertex, the row
// of held that is its, or -(1+p) for the rank p to ask; and held, the
// vertices whose rows the rank holds (its own in id order, then the
// replicated ones it does not own).
func (l *Layout) Where(rank int) (where, held []int32) {
	where = make([]int32, len(l.Owner))
	for v, p := range l.Owner {
		if p == int32(rank) {
			where[v] = int32(len(held))
			held = append(held, int32(v))
		} else {
			where[v] = -1 - p
		}
	}
	for _, v := range l.Replicated {
		if where[v] < 0 {
			where[v] = int32(len(held))
			held = append(held, v)
		}
	}
	return where, held
}

// RowBytes is how many bytes of a table of dim-wide float32 rows each rank
// holds.
func (l *Layout) RowBytes(dim int) []int64 {
	n := make([]int64, l.Ranks)
	for _, p := range l.Owner {
		n[p]++
	}
	rep := make([]int64, l.Ranks)
	for _, v := range l.Replicated {
		for r := range rep {
			if l.Owner[v] != int32(r) {
				rep[r]++
			}
		}
	}
	for r := range n {
		n[r] = (n[r] + rep[r]) * 4 * int64(dim)
	}
	return n
}

package multigpu

import (
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/train"
)

// Features are the feature rows of a group sharded over its ranks'
// memories the way the topology is: each rank holds the rows of the
// vertices it owns (the partition's owner array) plus a copy of the rows
// of the replicated vertices, and gathers any other row from the peer
// that owns it, read in place (backend.PeerRows). Sampling and the gather
// give every rank exactly the rows of the whole table, so training does
// not change.
type Features struct {
	Owner      []int32 // the rank holding each vertex's row
	Replicated []int32 // vertices whose rows every rank keeps
	RowBytes   []int64 // per rank: bytes of feature rows it holds (own + replicas)
	stores     []*featstore.Sharded
	shards     []backend.Rows // per rank: its own rows, then its replicas (nil: none)
	replicas   []backend.Rows
	pr         []backend.PeerRows
}

// PlaceFeatures uploads every rank's rows and sets each rank's
// Options.Features to its store over all of them. owner is the rank of
// each vertex (Topology.Owner; nil partitions the graph here) and
// replicated the vertices whose rows every rank copies (Topology.Replicated,
// or nil). The trainers free their stores; the rows, which peers read
// until every rank is done, are freed by Free after Run. The shards hold
// float32 rows (a bfloat16 dataset's rows are widened as each shard is
// uploaded: featstore.UploadShard). It fails when a backend cannot gather
// rows spread over devices; the caller may then keep the whole table on
// every rank.
func PlaceFeatures(ds *dataset.Dataset, ranks []Rank, owner, replicated []int32) (f *Features, err error) {
	n := len(ranks)
	if n == 0 {
		return nil, errors.New("multigpu: no ranks")
	}
	nv := ds.Graph.NumNodes
	if owner == nil {
		if owner, err = graph.Partition(ds.Graph, n); err != nil {
			return nil, err
		}
	}
	if int64(len(owner)) != nv {
		return nil, fmt.Errorf("multigpu: %d owners for %d vertices", len(owner), nv)
	}
	f = &Features{Owner: owner, Replicated: replicated}
	for i, r := range ranks {
		pr := backend.PeerRowsOf(r.Backend)
		if pr == nil {
			return nil, fmt.Errorf("device %d (%s) cannot gather feature rows spread over devices", i, r.Backend.Name())
		}
		f.pr = append(f.pr, pr)
	}
	defer func() {
		if err != nil {
			for i := range ranks {
				ranks[i].Options.Features = nil
			}
			for _, s := range f.stores {
				s.Free()
			}
			f.Free()
			f = nil
		}
	}()
	replica := make([]bool, nv)
	for _, v := range replicated {
		if v < 0 || int64(v) >= nv {
			return nil, fmt.Errorf("multigpu: replicated vertex %d outside the graph of %d", v, nv)
		}
		replica[v] = true
	}
	// Rank r's rows: the vertices it owns (pos is a vertex's place among
	// its owner's), then its copies of the replicated vertices it does not
	// own, in the order of replicated.
	own := make([][]int32, n)
	pos := make([]int32, nv)
	for v, p := range owner {
		if p < 0 || int(p) >= n {
			return nil, fmt.Errorf("multigpu: vertex %d owned by rank %d of %d", v, p, n)
		}
		pos[v] = int32(len(own[p]))
		own[p] = append(own[p], int32(v))
	}
	rowBytes := 4 * int64(ds.FeatDim)
	f.shards, f.replicas = make([]backend.Rows, n), make([]backend.Rows, n)
	for r := range n {
		var copies []int32
		for _, v := range replicated {
			if owner[v] != int32(r) {
				copies = append(copies, v)
			}
		}
		if f.shards[r], err = featstore.UploadShard(ranks[r].Backend, ds.FeatureTable(), ds.FeatDim, own[r]); err != nil {
			return nil, fmt.Errorf("device %d: %w", r, err)
		}
		if len(copies) > 0 {
			if f.replicas[r], err = featstore.UploadShard(ranks[r].Backend, ds.FeatureTable(), ds.FeatDim, copies); err != nil {
				return nil, fmt.Errorf("device %d: %w", r, err)
			}
		}
		f.RowBytes = append(f.RowBytes, rowBytes*int64(len(own[r])+len(copies)))
	}
	// Rank r's table: shards 0..n-1 are the ranks' own rows, shard n is
	// r's replicas (when it has any); rpos is a vertex's place among them.
	rpos := make([]int32, nv)
	for r := range n {
		var k int32
		for _, v := range replicated {
			if owner[v] != int32(r) {
				rpos[v], k = k, k+1
			}
		}
		shards := append([]backend.Rows(nil), f.shards...)
		if f.replicas[r] != nil {
			shards = append(shards, f.replicas[r])
		}
		at, index, kind := make([]int32, nv), make([]int32, nv), make([]uint8, nv)
		for v := range nv {
			p := owner[v]
			switch {
			case p == int32(r):
				at[v], index[v], kind[v] = p, pos[v], backend.RowLocal
			case replica[v]:
				at[v], index[v], kind[v] = int32(n), rpos[v], backend.RowReplica
			default:
				at[v], index[v], kind[v] = p, pos[v], backend.RowRemote
			}
		}
		s, err := featstore.NewSharded(ranks[r].Backend, nv, shards, r, at, index, kind)
		if err != nil {
			return nil, fmt.Errorf("device %d: %w", r, err)
		}
		f.stores = append(f.stores, s)
		ranks[r].Options.Features = s
	}
	return f, nil
}

// Reuse makes every rank's store keep the remote rows of each gather for
// the next (featstore.Sharded.Keep): sized from the replay envelope before
// the step is captured (chained before any BeforeCapture a rank has), or
// from the first gather with the eager driver.
func (f *Features) Reuse(ranks []Rank) {
	for r, s := range f.stores {
		s.Keep(0)
		prev := ranks[r].BeforeCapture
		ranks[r].BeforeCapture = func(env train.EnvelopeReport) error {
			if err := s.Keep(env.Caps[0].Src); err != nil {
				return err
			}
			if prev != nil {
				return prev(env)
			}
			return nil
		}
	}
}

// Reads are the rows the ranks' gathers counted, summed, by where they
// lived; read them after Run (the stores keep their counts when the
// trainers free them).
func (f *Features) Reads() (backend.ReadCounts, error) {
	var sum backend.ReadCounts
	for r, s := range f.stores {
		c, err := s.Stats()
		if err != nil {
			return sum, fmt.Errorf("device %d: %w", r, err)
		}
		sum = sum.Plus(c)
	}
	return sum, nil
}

// Free releases every rank's rows; call it once no rank gathers any more
// (after Run).
func (f *Features) Free() {
	if f == nil {
		return
	}
	for r := range f.shards {
		for _, rows := range []backend.Rows{f.shards[r], f.replicas[r]} {
			if rows != nil {
				f.pr[r].FreeRows(rows)
			}
		}
	}
	f.shards, f.replicas = nil, nil
}

// ShardFeatures is the default choice between features sharded over the
// devices and the whole table on every device: shard when a table of
// tableBytes does not fit some device's budget (the bytes it may hold for
// features, with room for the step kept). A budget below zero means the
// device cannot say (the CPU's memory is the host's): such a group
// replicates.
func ShardFeatures(tableBytes int64, budgets []int64) bool {
	shard := false
	for _, b := range budgets {
		if b < 0 {
			return false
		}
		shard = shard || tableBytes > b
	}
	return shard
}

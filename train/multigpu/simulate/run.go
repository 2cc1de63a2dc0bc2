package simulate

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// worker is one goroutine's sampler and scratch, reused across ranks.
type worker struct {
	smp   *sample.Sampler
	mb    sample.MiniBatch
	mark  []uint32 // per vertex: stamp of the set it was last put in
	stamp uint32
	asks  []int // per rank of the job: rows asked of it in this gather
}

// rankState is what a rank carries from one gather to the next.
type rankState struct {
	ids  []int32 // this step's input rows (the bottom block's sources)
	kept []int32 // rows the last gather kept for the next (reuse)
}

// sim is one simulation under way.
type sim struct {
	g       *graph.CSR
	cfg     Config
	pl      *placement
	workers []*worker
	state   []rankState
	cap     int // the eager plan's capacity of input rows (sample.Envelope)
}

func run(ds *dataset.Dataset, cfg Config, pl *placement) (*Result, error) {
	n := cfg.Ranks()
	b := cfg.Batch / n
	res := &Result{Config: cfg, Dataset: ds.Name, Vertices: ds.Graph.NumNodes, Edges: ds.Graph.NumEdges(),
		FeatDim: ds.FeatDim, TrainSeeds: len(ds.Train), Replicated: pl.replicas}
	res.EpochSteps = (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
	if res.EpochSteps == 0 {
		return res, nil
	}
	s := &sim{g: ds.Graph, cfg: cfg, pl: pl, state: make([]rankState, n)}
	s.cap = sample.Envelope(ds.Graph, b, cfg.Fanouts)[0].Src
	for range min(cfg.Threads, n) {
		smp, err := sample.NewSampler(ds.Graph, cfg.Fanouts, 1)
		if err != nil {
			return nil, err
		}
		s.workers = append(s.workers, &worker{smp: smp, mark: make([]uint32, ds.Graph.NumNodes), asks: make([]int, n)})
	}
	chunk := 1 // eager chunks start at one row (train's startChunks)
	if cfg.Chunks == ReplayChunks {
		chunk = math.MaxInt32 // sized after the fact from the needs (replayChunks)
	}
	var perm []int32
	errs := make([]error, n)
	acc := make([]featstore.ExchangeCounts, n) // per rank, as its store counts
	for k := range cfg.Steps {
		epoch, step := k/res.EpochSteps, k%res.EpochSteps
		if step == 0 {
			perm = train.Shuffle(ds.Train, cfg.Seed, epoch)
		}
		st := Step{Epoch: epoch, Step: step, Ranks: make([]RankStep, n)}
		s.forRanks(func(w *worker, r int) {
			lo := min(len(perm), step*cfg.Batch+r*b)
			hi := min(len(perm), step*cfg.Batch+(r+1)*b)
			errs[r] = s.sampleRank(w, r, perm[lo:hi], rng.Key{Seed: cfg.Seed, Epoch: uint32(epoch), Step: uint32(step)}, &st.Ranks[r])
		})
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		switch {
		case cfg.Features == Whole:
			for r := range st.Ranks {
				st.Ranks[r].Rows = Rows{Local: int64(len(s.state[r].ids))}
			}
		case cfg.Features == Peer:
			s.forRanks(func(w *worker, r int) { s.peerGather(w, r, &st.Ranks[r]) })
			for _, rs := range st.Ranks {
				res.Totals.Rows = res.Totals.Rows.Plus(peerCounts(rs.Rows))
			}
		default:
			chunk = s.exchangeStep(&st, chunk, acc)
		}
		var most, sum int64
		for _, rs := range st.Ranks {
			most, sum = max(most, rs.Edges), sum+rs.Edges
			res.Totals.Lists.Local += rs.Lists.Local
			res.Totals.Lists.Replica += rs.Lists.Replica
			res.Totals.Lists.Remote += rs.Lists.Remote
		}
		if sum > 0 {
			st.Imbalance = float64(most) * float64(n) / float64(sum)
		}
		res.Steps = append(res.Steps, st)
	}
	if cfg.Features.Exchanged() {
		res.Totals.Exchange = s.exchangeTotals(acc, ds.FeatDim)
		if cfg.Chunks == ReplayChunks {
			replayChunks(res)
		}
	}
	return res, nil
}

// forRanks runs f for every rank, on the workers in parallel.
func (s *sim) forRanks(f func(w *worker, r int)) { forEach(s.workers, s.cfg.Ranks(), f) }

// forEach runs f for every rank of n, on the workers in parallel (each
// worker takes the next rank when done with one).
func forEach[W any](workers []W, n int, f func(w W, r int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := int(next.Add(1) - 1); r < n; r = int(next.Add(1) - 1) {
				f(w, r)
			}
		}()
	}
	wg.Wait()
}

// sampleRank samples rank r's seeds with the step's key, as the rank's
// trainer does, and counts its list reads and sampled edges.
func (s *sim) sampleRank(w *worker, r int, seeds []int32, key rng.Key, rs *RankStep) error {
	if err := w.smp.SampleInto(seeds, key, &w.mb); err != nil {
		return err
	}
	rs.Seeds = len(seeds)
	L := len(s.cfg.Fanouts)
	group := int32(r % s.cfg.TopoRanks)
	for h, f := range s.cfg.Fanouts {
		blk := &w.mb.Blocks[L-1-h]
		rs.Edges += int64(blk.NumEdges())
		dst := blk.SrcIDs[:blk.NumDst]
		if s.pl.listOwner == nil {
			rs.Lists.Local += int64(len(dst))
			continue
		}
		for _, v := range dst {
			switch {
			case s.pl.listOwner[v] == group:
				rs.Lists.Local++
			case s.pl.replica[v]:
				rs.Lists.Replica++
			default:
				rs.Lists.Remote++
				rs.Lists.RemoteBytes += 32 * sectors(s.g.Degree(int64(v)), f)
			}
		}
	}
	st := &s.state[r]
	st.ids = append(st.ids[:0], w.mb.Blocks[0].SrcIDs...)
	return nil
}

// sectors is how many 32-byte sectors sampling fanout neighbours of a list
// of deg reads: one per position drawn, at most the list's.
func sectors(deg int64, fanout int) int64 {
	k := deg
	if fanout >= 0 {
		k = min(deg, int64(fanout))
	}
	return min(k, (deg+7)/8)
}

// markKept stamps rank r's kept rows in w's marks and returns the stamp.
func (w *worker) markKept(kept []int32) uint32 {
	w.stamp++
	if w.stamp == 0 { // wrapped: old stamps could alias
		clear(w.mark)
		w.stamp = 1
	}
	for _, v := range kept {
		w.mark[v] = w.stamp
	}
	return w.stamp
}

// peerGather counts rank r's rows as a sharded store's gather does
// (featstore.Sharded over backend.PeerRows.GatherRows): own, replica, read
// from the peer in place, or (with reuse) kept from the gather before, and
// keeps this gather's rows from peers for the next.
func (s *sim) peerGather(w *worker, r int, rs *RankStep) {
	st := &s.state[r]
	stamp := w.markKept(st.kept)
	group := int32(r % s.cfg.TopoRanks)
	kept := st.kept[:0]
	for _, v := range st.ids {
		switch {
		case s.pl.rowOwner[v] == group:
			rs.Rows.Local++
			continue
		case s.pl.rowReplica != nil && s.pl.rowReplica[v]:
			rs.Rows.Replica++
			continue
		case s.cfg.Reuse && w.mark[v] == stamp:
			rs.Rows.Reused++
		default:
			rs.Rows.SameHost++
		}
		if s.cfg.Reuse {
			kept = append(kept, v)
		}
	}
	st.kept = kept
}

// peerCounts are a rank's rows of a step as the sharded store counts them
// (featstore.Sharded.Stats).
func peerCounts(r Rows) backend.ReadCounts {
	return backend.ReadCounts{Local: r.Local, Replica: r.Replica, Remote: r.SameHost + r.OtherHost, Reused: r.Reused}
}

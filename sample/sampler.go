package sample

import (
	"errors"
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// MaxHops is the largest number of sampling hops: hop h uses Philox stream h,
// and streams from 64 on belong to other users.
const MaxHops = 64

// Sampler draws MiniBatches from a graph with fixed fanouts. It owns a
// Relabeler and scratch buffers that are reused across calls, so it is not
// safe for concurrent use; run one Sampler per goroutine.
type Sampler struct {
	g       *graph.CSR
	fanouts []int // fanouts[h]: neighbours per destination at hop h (-1: all)
	threads int
	rl      *Relabeler
	nbrs    []int32 // scratch: global neighbour ids of the current hop
	src     []int32 // scratch: source ids of the current hop before trimming
}

// NewSampler checks the graph and fanouts and returns a sampler that uses
// up to threads goroutines per layer (threads < 1 means 1). fanouts[h] is
// the number of neighbours sampled per destination at hop h from the seeds
// (-1: all, 0: none). A wide graph (int64 ids) is an error.
func NewSampler(g *graph.CSR, fanouts []int, threads int) (*Sampler, error) {
	if err := checkGraph(g); err != nil {
		return nil, err
	}
	if err := checkFanouts(fanouts); err != nil {
		return nil, err
	}
	return &Sampler{
		g:       g,
		fanouts: append([]int(nil), fanouts...),
		threads: max(threads, 1),
		rl:      NewRelabeler(g.NumNodes),
	}, nil
}

// checkGraph rejects graphs the sampler cannot index without panicking.
func checkGraph(g *graph.CSR) error {
	if g == nil {
		return errors.New("sampler: nil graph")
	}
	if err := g.Narrow(); err != nil {
		return fmt.Errorf("sampler: %w", err)
	}
	if g.NumNodes < 0 || int64(len(g.Indptr)) != g.NumNodes+1 {
		return fmt.Errorf("sampler: graph indptr has %d entries, want NumNodes+1 = %d", len(g.Indptr), g.NumNodes+1)
	}
	if e := g.NumEdges(); e != int64(len(g.Indices)) {
		return fmt.Errorf("sampler: graph indptr ends at %d but there are %d indices", e, len(g.Indices))
	}
	return nil
}

// checkFanouts requires 1..MaxHops fanouts, each -1 or >= 0.
func checkFanouts(fanouts []int) error {
	if len(fanouts) == 0 || len(fanouts) > MaxHops {
		return fmt.Errorf("sampler: %d fanouts, want 1 to %d", len(fanouts), MaxHops)
	}
	for h, f := range fanouts {
		if f < -1 {
			return fmt.Errorf("sampler: fanout %d at hop %d: want -1 (all), 0 or a positive count", f, h)
		}
	}
	return nil
}

// Fanouts returns a copy of the fanouts, hop 0 first.
func (s *Sampler) Fanouts() []int { return append([]int(nil), s.fanouts...) }

// Sample samples a MiniBatch for the seeds with a fresh set of slices that
// the caller owns. Hop h uses key with Stream = h; key.Stream is ignored.
// Seeds must be distinct vertex ids of the graph.
func (s *Sampler) Sample(seeds []int32, key rng.Key) (*MiniBatch, error) {
	mb := &MiniBatch{}
	if err := s.SampleInto(seeds, key, mb); err != nil {
		return nil, err
	}
	return mb, nil
}

// SampleInto is Sample writing into mb, reusing its slices where they are
// large enough (a loop that keeps one MiniBatch allocates nothing once the
// slices have grown). On error mb is left unspecified.
func (s *Sampler) SampleInto(seeds []int32, key rng.Key, mb *MiniBatch) error {
	if err := s.checkSeeds(seeds); err != nil {
		return err
	}
	layers := len(s.fanouts)
	mb.Seeds = append(mb.Seeds[:0], seeds...)
	if cap(mb.Blocks) < layers {
		mb.Blocks = make([]Block, layers)
	}
	mb.Blocks = mb.Blocks[:layers]
	dst := mb.Seeds
	for h, f := range s.fanouts {
		b := &mb.Blocks[layers-1-h]
		key.Stream = uint32(h)
		if err := s.hop(dst, f, key, b); err != nil {
			return fmt.Errorf("sampler: hop %d: %w", h, err)
		}
		dst = b.SrcIDs
	}
	return nil
}

// hop samples and relabels one block for the destinations dst.
func (s *Sampler) hop(dst []int32, fanout int, key rng.Key, b *Block) error {
	b.NumDst = len(dst)
	b.Indptr = grow(b.Indptr, len(dst)+1)
	total := Layer(s.g, dst, fanout, key, b.Indptr, s.nbrs, s.threads)
	if total > math.MaxInt32 {
		return fmt.Errorf("%d sampled edges exceed int32 offsets", total)
	}
	if total > len(s.nbrs) {
		s.nbrs = make([]int32, total+total/4)
		Layer(s.g, dst, fanout, key, b.Indptr, s.nbrs, s.threads)
	}
	nbrs := s.nbrs[:total]
	b.Indices = grow(b.Indices, total)
	s.src = grow(s.src, len(dst)+total)
	nSrc := s.rl.Relabel(dst, nbrs, s.src, b.Indices)
	b.SrcIDs = append(b.SrcIDs[:0], s.src[:nSrc]...)
	return nil
}

// checkSeeds requires distinct seeds in [0, NumNodes).
func (s *Sampler) checkSeeds(seeds []int32) error {
	for i, v := range seeds {
		if v < 0 || int64(v) >= s.g.NumNodes {
			return fmt.Errorf("sampler: seed %d (position %d) is outside [0, %d)", v, i, s.g.NumNodes)
		}
	}
	if i, j := s.rl.firstDuplicate(seeds); i >= 0 {
		return fmt.Errorf("sampler: seed %d appears twice (positions %d and %d)", seeds[i], i, j)
	}
	return nil
}

// grow returns s resliced to n, reallocated when its capacity is short.
func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

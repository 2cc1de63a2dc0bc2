package simulate

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/sample"
)

// typedWorker is one goroutine's scratch for typed steps, reused across
// ranks: per type a stamp per vertex (the vertex space of a hop, as the
// backends' relabelling tables keep it) and the hop's vertices.
type typedWorker struct {
	mark     [][]uint32 // [type][vertex]: stamp of the hop whose sources hold the vertex
	stamp    uint32
	dst, src [][]int32 // [type]: the hop's destinations, and its sources (destinations first)
	indptr   []int32
	nbrs     []int32
}

func newTypedWorker(ds *dataset.Dataset) *typedWorker {
	T := len(ds.Types)
	w := &typedWorker{mark: make([][]uint32, T), dst: make([][]int32, T), src: make([][]int32, T)}
	for t, ty := range ds.Types {
		w.mark[t] = make([]uint32, ty.Count)
	}
	return w
}

// sample samples one rank's seeds (of the target type) with the step's
// key as the typed step does and writes its live sizes into rs: per hop
// h (layer L-1-h), every type's sources start as its destinations, and
// every relation r samples its fanout of its destination type's
// destinations under rng.Derive(key.Seed, r) on the hop's stream, its new
// neighbours added to its source type's sources.
func (w *typedWorker) sample(ds *dataset.Dataset, fanouts [][]int, seeds []int32, key rng.Key, rs *TypedRankStep) error {
	L, T, R := len(fanouts), len(ds.Types), len(ds.Relations)
	*rs = TypedRankStep{Seeds: len(seeds), Layers: make([]TypedLayer, L)}
	for t := range T {
		w.dst[t] = w.dst[t][:0]
	}
	w.dst[ds.Target] = append(w.dst[ds.Target], seeds...)
	for h := range L {
		ly := TypedLayer{Src: make([]int64, T), Edges: make([]int64, R)}
		w.begin()
		for t := range T {
			w.src[t] = w.src[t][:0]
			w.add(t, w.dst[t])
		}
		for r, rel := range ds.Relations {
			if len(w.dst[rel.Dst]) == 0 {
				continue
			}
			k := key
			k.Seed, k.Stream = rng.Derive(key.Seed, r), uint32(h)
			n, err := w.layer(rel.Graph, w.dst[rel.Dst], fanouts[h][r], k)
			if err != nil {
				return fmt.Errorf("simulate: relation %s, hop %d: %w", rel.Name, h, err)
			}
			ly.Edges[r] = int64(n)
			rs.Edges += int64(n)
			w.add(rel.Src, w.nbrs[:n])
		}
		for t := range T {
			ly.Src[t] = int64(len(w.src[t]))
		}
		rs.Layers[L-1-h] = ly
		w.dst, w.src = w.src, w.dst
	}
	return nil
}

// begin starts a hop's vertex spaces.
func (w *typedWorker) begin() {
	w.stamp++
	if w.stamp == 0 { // wrapped: old stamps could alias
		for _, m := range w.mark {
			clear(m)
		}
		w.stamp = 1
	}
}

// add puts the ids not yet among type t's sources of the hop there, in
// order of first appearance.
func (w *typedWorker) add(t int, ids []int32) {
	m := w.mark[t]
	for _, v := range ids {
		if m[v] != w.stamp {
			m[v] = w.stamp
			w.src[t] = append(w.src[t], v)
		}
	}
}

// layer samples fanout neighbours of each of dst in g with package
// sample's sampler (the backends' SampleLayer) into w.nbrs and returns
// how many it sampled.
func (w *typedWorker) layer(g *graph.CSR, dst []int32, fanout int, key rng.Key) (int, error) {
	if cap(w.indptr) < len(dst)+1 {
		w.indptr = make([]int32, len(dst)+1)
	}
	indptr := w.indptr[:len(dst)+1]
	total := sample.Layer(g, dst, fanout, key, indptr, w.nbrs, 1)
	if total > math.MaxInt32 {
		return 0, fmt.Errorf("%d sampled edges exceed int32 offsets", total)
	}
	if total > len(w.nbrs) {
		w.nbrs = make([]int32, total+total/4)
		sample.Layer(g, dst, fanout, key, indptr, w.nbrs, 1)
	}
	return total, nil
}

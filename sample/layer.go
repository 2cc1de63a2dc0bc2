package sample

import (
	"math"
	"sync"

	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/rng"
)

// linearScanMax is the largest fanout whose Floyd membership check is a
// linear scan over the positions chosen so far; larger fanouts use a small
// hash set.
const linearScanMax = 32

// minDstPerWorker keeps tiny layers on one goroutine.
const minDstPerWorker = 256

// Layer samples, for each dst[i], up to fanout neighbours by the package's
// sampling convention, with key.Stream naming the hop. It writes
// indptr[0..len(dst)] (len(indptr) >= len(dst)+1) with the true offsets
// (saturated at MaxInt32), and nbrs[e] = global neighbour id for
// e < min(total, len(nbrs)); it returns the true total edge count, which may
// exceed len(nbrs) (the caller then grows nbrs and calls again).
//
// Preconditions (callers validate): g is narrow (int32 indices) and every
// dst id lies in [0, g.NumNodes). threads < 1 means 1; fewer goroutines are
// used when dst is short. The work is a count pass over dst, a prefix sum,
// and a fill pass balanced by edges, the passes parallel over contiguous
// chunks; the result does not depend on threads. On one thread with
// fanout <= 32 nothing is allocated; larger fanouts allocate a small hash
// set per call and worker, and several threads cost a few goroutines.
func Layer(g *graph.CSR, dst []int32, fanout int, key rng.Key, indptr, nbrs []int32, threads int) (total int) {
	return LayerSkip(g, dst, fanout, key, indptr, nbrs, threads, nil)
}

// LayerSkip is Layer in which a destination v with skip[v] >= 0 (skip nil,
// or [g.NumNodes]) gets no neighbours; every other destination's are
// those Layer chooses. The hybrid mode's hot vertices are skipped: their
// bottom-layer rows come from the CPU.
func LayerSkip(g *graph.CSR, dst []int32, fanout int, key rng.Key, indptr, nbrs []int32, threads int, skip []int32) (total int) {
	return LayerExcluding(g, dst, fanout, key, indptr, nbrs, threads, skip, nil)
}

// LayerExcluding is LayerSkip in which each destination x samples its row
// with the entries that ex excludes removed before sampling (ex nil: none;
// see Exclusion): with d the degree of x and e the number of its excluded
// entries, x gets min(fanout, d-e) neighbours (all d-e, in row order, when
// fanout < 0 or fanout >= d-e), chosen by the sampling convention's Floyd
// draws over d-e positions, each chosen position p standing for the p-th
// entry of the row that is not excluded (Exclusion.Position). A
// destination without excluded entries samples as in Layer. Link
// prediction's training hops take the step's positive edges out so.
func LayerExcluding(g *graph.CSR, dst []int32, fanout int, key rng.Key, indptr, nbrs []int32, threads int, skip []int32, ex *Exclusion) (total int) {
	n := len(dst)
	workers := max(1, min(threads, n/minDstPerWorker))
	indptr[0] = 0
	if workers == 1 {
		countRange(g, dst, fanout, indptr[1:n+1], skip, ex)
		total = prefixSum(indptr[:n+1])
		if total > 0 && len(nbrs) > 0 {
			fillRange(g, dst, fanout, key, indptr, nbrs, 0, n, ex)
		}
		return total
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			countRange(g, dst[lo:hi], fanout, indptr[lo+1:hi+1], skip, ex)
		}(n*w/workers, n*(w+1)/workers)
	}
	wg.Wait()
	total = prefixSum(indptr[:n+1])
	if total == 0 || len(nbrs) == 0 {
		return total
	}
	// Split destinations so that each worker gets about the same number of
	// edges (a few hubs sampled with fanout -1 would otherwise dominate).
	work := min(total, len(nbrs))
	for w := 0; w < workers; w++ {
		lo := searchOffset(indptr[:n+1], work*w/workers)
		hi := searchOffset(indptr[:n+1], work*(w+1)/workers)
		if w == workers-1 {
			hi = n
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fillRange(g, dst, fanout, key, indptr, nbrs, lo, hi, ex)
		}(lo, hi)
	}
	wg.Wait()
	return total
}

// countRange writes the sampled count of each destination (0 for one
// that skip marks; its row less the entries ex excludes).
func countRange(g *graph.CSR, dst []int32, fanout int, counts []int32, skip []int32, ex *Exclusion) {
	ip := g.Indptr
	for i, v := range dst {
		if skip != nil && skip[v] >= 0 {
			counts[i] = 0
			continue
		}
		d := ip[v+1] - ip[v]
		if ex != nil {
			_, e := ex.Find(v)
			d -= int64(e)
		}
		counts[i] = int32(sampledCount(d, fanout))
	}
}

// sampledCount is min(deg, fanout), deg for fanout < 0, saturated at MaxInt32.
func sampledCount(deg int64, fanout int) int64 {
	if fanout >= 0 && int64(fanout) < deg {
		deg = int64(fanout)
	}
	return min(deg, math.MaxInt32)
}

// prefixSum turns p[1:] from counts into offsets (p[0] = 0) in place,
// saturating at MaxInt32, and returns the true total.
func prefixSum(p []int32) int {
	var acc int64
	for i := 1; i < len(p); i++ {
		acc += int64(p[i])
		p[i] = int32(min(acc, math.MaxInt32))
	}
	return int(acc)
}

// searchOffset returns the first i with p[i] >= off (p non-decreasing),
// clamped to len(p)-1.
func searchOffset(p []int32, off int) int {
	lo, hi := 0, len(p)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int(p[mid]) < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

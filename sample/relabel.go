package sample

// Relabeler assigns local ids to sampled vertices (see the package comment's
// relabelling convention). It keeps one dense stamp per vertex
// (generation<<32 | local id, 8 bytes per vertex), so a call costs one
// array access per id and allocates nothing; stamps are invalidated by
// bumping the generation, not by clearing. A Relabeler is not safe for
// concurrent use.
type Relabeler struct {
	stamp []uint64 // [numNodes] gen<<32 | local id; valid iff the gen matches
	gen   uint64   // current generation, in the upper 32 bits' units
}

// NewRelabeler returns a relabeler for vertex ids in [0, numNodes).
func NewRelabeler(numNodes int64) *Relabeler {
	return &Relabeler{stamp: make([]uint64, max(numNodes, 0))}
}

// next starts a new generation and returns its tag (gen<<32).
func (r *Relabeler) next() uint64 {
	r.gen++
	if r.gen == 1<<32 { // wrapped: old stamps could alias, clear them
		clear(r.stamp)
		r.gen = 1
	}
	return r.gen << 32
}

// Relabel assigns local ids: dst[i] keeps i (a repeated destination maps to
// its first position); each neighbour not seen before gets the next id in
// order of first appearance in nbrs. It writes srcIDs[i] for every local id
// i < len(srcIDs) (destinations first, then new neighbours) and local[e] for
// e < min(len(nbrs), len(local)), and returns the true source count, which
// may exceed len(srcIDs) (ids past the capacity are still assigned, so
// local stays correct). dst may alias srcIDs[:len(dst)]. Ids must lie in
// [0, numNodes).
func (r *Relabeler) Relabel(dst, nbrs []int32, srcIDs, local []int32) (nSrc int) {
	tag := r.next()
	stamp := r.stamp
	for i, v := range dst {
		if stamp[v]&^0xffffffff != tag {
			stamp[v] = tag | uint64(i)
		}
		if i < len(srcIDs) {
			srcIDs[i] = v
		}
	}
	n := uint32(len(dst))
	for e, v := range nbrs {
		s := stamp[v]
		id := uint32(s)
		if s&^0xffffffff != tag {
			id = n
			stamp[v] = tag | uint64(n)
			if int(n) < len(srcIDs) {
				srcIDs[n] = v
			}
			n++
		}
		if e < len(local) {
			local[e] = int32(id)
		}
	}
	return int(n)
}

// firstDuplicate returns the positions (i, j), i < j, of the first repeated
// id in ids, or (-1, -1). Ids must lie in [0, numNodes).
func (r *Relabeler) firstDuplicate(ids []int32) (int, int) {
	tag := r.next()
	for j, v := range ids {
		if s := r.stamp[v]; s&^0xffffffff == tag {
			return int(uint32(s)), j
		}
		r.stamp[v] = tag | uint64(j)
	}
	return -1, -1
}

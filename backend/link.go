package backend

import "fmt"

// Link is the capability of link prediction's step (package train/link):
// a batch of positive edges and their drawn negatives laid out as a list
// of ends, the batch's edges taken out of its sampled neighbourhoods, and
// the pairs' products and binary cross-entropy. It is checked when a link
// trainer is built (LinkOf).
//
// A step of b live positives and k negatives each has b·(2+k) ends:
// positions [0, b) are the positives' sources, [b, 2b) their
// destinations and position 2b + i·k + j the j-th negative destination of
// positive i. Its b·(1+k) pairs are: pair i < b = (position i, position
// b+i), positive; pair b + i·k + j = (position i, position 2b + i·k + j),
// negative. Every op reads b from n, a Count whose Cap is the batch's
// positive capacity B, so the layout follows the live batch without the
// host. The trainer relabels the ends (Relabel over a block without
// destinations whose neighbours are the ends) into distinct seeds and
// rows: position q's embedding is row rows[q] of the seeds' embeddings.
type Link interface {
	// EdgeSeeds writes a step's ends. With b = min(n, n.Cap) live edge
	// ids (ids I32 [n.Cap], rows of pairs, I32 [edges, 2]): ends[i] =
	// pairs[2·ids[i]], ends[b+i] = pairs[2·ids[i]+1] and, for j < k,
	// ends[2b + i·k + j] = a negative destination drawn from word j of
	// the Philox sequence of index ids[i] in stream r (rng.Key.Word): w =
	// that word, and the vertex is Uniform(w, nodes) when dist is nil, or,
	// with dist (I32 [nodes+1] cumulative degrees: dist[0] = 0,
	// dist[v+1]-dist[v] = v's degree), the v with dist[v] <= Uniform(w,
	// dist[nodes]) < dist[v+1] (drawn by degree). ends is I32
	// [n.Cap·(2+k)]. It writes b·(2+k) into nEnds and b·(1+k) into
	// nPairs. An edge id outside pairs is an error.
	EdgeSeeds(pairs, ids Buffer, n Count, k, nodes int, dist Buffer, r Rand, ends Buffer, nEnds, nPairs Count)
	// ExcludeEdges removes a batch's positive edges from a block that
	// SampleLayer has sampled and Relabel has not yet relabelled: with
	// ends laid out as EdgeSeeds writes them (b = min(n, n.Cap)
	// positives (u_i, v_i) = (ends[i], ends[b+i])), every sampled
	// neighbour w of destination x = blk.SrcIDs[d] with (x, w) = (u_i,
	// v_i) for some i (the edge itself: row u_i's entry v_i) and, with
	// reverse, (x, w) = (v_i, u_i) too, is removed; the other neighbours
	// keep their order, and Indptr, Nbrs and NumEdges are rewritten. A
	// block whose NumEdges exceeds its capacity (an overflow the driver
	// will see) is left as it is. scratch is I64 [ExcludeScratch(n.Cap)],
	// the op's own (its contents afterwards are unspecified).
	ExcludeEdges(blk *Block, ends Buffer, n Count, reverse bool, scratch Buffer)
	// GroupRows lists the live positions q < m (m = min(nEnds, nEnds.Cap))
	// grouped by their row rows[q] < nRows: order[ptr[r]:ptr[r+1]] are the
	// positions of row r in increasing order, for r < min(nRows,
	// nRows.Cap). rows is I32 [nEnds.Cap], ptr I32 [nRows.Cap+1], order I32
	// [nEnds.Cap]. A row outside [0, nRows) is an error.
	GroupRows(rows Buffer, nEnds, nRows Count, ptr, order Buffer)
	// PairProduct writes h[p, :] = x[rows[a_p], :] ⊙ x[rows[c_p], :]
	// (elementwise) for every live pair p = (a_p, c_p) of the layout above
	// (b from n); x is F32 [rows' capacity, dim], h F32 [n.Cap·(1+k), dim].
	PairProduct(x Buffer, dim int, n Count, k int, rows, h Buffer)
	// PairProductBackward overwrites dx's live rows (r < min(nRows,
	// nRows.Cap)) with the gradient of PairProduct: row r gets, for each
	// of its positions q in GroupRows's order (ptr, order), the sum over
	// the pairs p that q is an end of (for a source, its positive pair,
	// then its negatives j = 0..k-1) of dh[p, :] ⊙ x[rows[other end of p],
	// :]. No float atomics: the same bits every run.
	PairProductBackward(x, dh Buffer, dim int, n Count, k int, rows, ptr, order Buffer, nRows Count, dx Buffer)
	// PairLoss is the binary cross-entropy with logits of the live pairs'
	// scores (F32 [n.Cap·(1+k)]): label 1 for pairs p < b, 0 after. loss
	// (F32 [1]) = the mean over the b·(1+k) pairs, added in a fixed order
	// (the same bits every run); dscores = its gradient, (sigmoid(s) -
	// label)/(b·(1+k)); correct (an I32 at correct.Off) = the pairs whose
	// score is on the label's side of 0 (> 0 for a positive, < 0 for a
	// negative).
	PairLoss(scores Buffer, n Count, k int, loss, dscores Buffer, correct Count)
}

// ExcludeScratch is the I64 elements of ExcludeEdges's scratch for a batch
// of capacity positives: an open-addressing table of twice the excluded
// pairs (both directions), at least half empty.
func ExcludeScratch(capacity int) int {
	n := 16
	for n < 4*max(capacity, 1) {
		n *= 2
	}
	return n
}

// CheckNegatives checks EdgeSeeds's negatives per positive.
func CheckNegatives(k int) error {
	if k < 0 {
		return fmt.Errorf("k: %d negatives per positive, want >= 0", k)
	}
	return nil
}

// LinkOf is be's Link (be itself, or the wrapper around a backend that
// has it), or an error naming be and the capability.
func LinkOf(be Backend) (Link, error) {
	return need[Link](be, "the link-prediction ops (backend.Link)")
}

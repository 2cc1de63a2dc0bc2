package backend

// Attention holds the ops of graph attention (GAT, Veličković et al. 2018)
// over a sampled block. A GAT layer projects its sources to z = x·W, F32
// [NumSrc.Cap, heads·dim] with head h in columns [h·dim, (h+1)·dim), scores
// every source and destination per head (HeadDot with the attention vectors
// a_src and a_dst), turns the scores into attention coefficients over each
// destination's sampled edges plus its own self loop (EdgeSoftmax), and adds
// up the sources' rows weighted by them (HeadAggregate).
//
// Coefficient layout: the coefficients of a block live in one F32 buffer
// coef [NumDst.Cap + NumEdges.Cap, heads], row-major: row i (i <
// NumDst.Cap) is destination i's self loop, whose source is source row i
// (destinations come first among the sources); row NumDst.Cap + e is edge
// e, whose source is Indices[e]. Within destination i the positions are
// k = 0 for the self loop and k = 1 + (e - Indptr[i]) for its edges.
//
// Edges whose source lies outside [0, NumSrc) (a block whose sources
// overflowed) take no part: their coefficient is 0 and they add nothing.
//
// Attention is a capability: only GAT models use it, and nn.NewModel
// checks it (AttentionOf) when it builds one.
type Attention interface {
	// HeadDot writes out[i, h] = Σ_f x[i, h·dim+f]·a[h·dim+f] for rows
	// [:n], summed in float64: x F32 [n.Cap, heads·dim], a F32
	// [heads·dim], out F32 [n.Cap, heads].
	HeadDot(x Buffer, n Count, heads, dim int, a, out Buffer)
	// HeadDotBackward is the backward of two HeadDots over the same x (a
	// GAT layer's source and destination scores, which share z): on rows
	// [:n1] dx[i, h·dim+f] += dout1[i, h]·a1[h·dim+f], then on rows [:n2]
	// += dout2[i, h]·a2[h·dim+f], each product rounded as added (rows past
	// them are left alone); da1[h·dim+f] = Σ_{i<n1} dout1[i, h]·x[i,
	// h·dim+f] and da2 likewise over rows [:n2] are overwritten, added in a
	// fixed order (the same bits for any capacity). x and dx F32
	// [max(n1.Cap, n2.Cap), heads·dim], dout1 F32 [n1.Cap, heads], dout2
	// F32 [n2.Cap, heads], a1, a2, da1, da2 F32 [heads·dim]. A single
	// HeadDot's backward passes a zero count as n2.
	HeadDotBackward(x, dout1, dout2 Buffer, n1, n2 Count, heads, dim int, a1, a2, dx, da1, da2 Buffer)
	// EdgeSoftmax writes the attention coefficients (layout above) of every
	// live destination i and head h: with el F32 [NumSrc.Cap, heads] and
	// er F32 [NumDst.Cap, heads], position k with source j scores
	// s_k = LeakyReLU(el[j, h] + er[i, h]) (negative slope slope), and
	// α_k = exp(s_k - max s)/Σ exp(s - max s) over the self loop and the
	// valid edges, in float64, rounded once. With p > 0 (attention dropout)
	// α_k is kept with probability 1-p and scaled by 1/(1-p), else 0:
	// element (i, k, h) is kept iff word q = k·heads + h of Philox(index =
	// key_i, slot = q/4), word q%4, in stream r is >= rng.DropThreshold(p),
	// where key_i = r.Keys[i] when r.Keys is set (the block's SrcIDs: the
	// destination's vertex id, so a mask does not depend on where a vertex
	// lands) and i otherwise. p must lie in [0, 1); with p = 0, r is unused.
	EdgeSoftmax(blk *Block, el, er Buffer, heads int, slope, p float32, r Rand, coef Buffer)
	// EdgeSoftmaxBackward takes dcoef (the gradient of EdgeSoftmax's coef,
	// same layout) and recomputes the coefficients and the dropout mask
	// from el, er and r exactly as EdgeSoftmax did (pass the same
	// arguments). It overwrites der[i, h] (F32 [NumDst.Cap, heads]) for
	// live destinations with the gradient of er, and del[j, h] (F32
	// [NumSrc.Cap, heads]) for rows [0, NumSrc) with the gradient of el:
	// with g_k = dcoef_k·mask_k/(1-p), d_k = α_k·(g_k - Σ_m α_m·g_m) and
	// t_k = d_k·(1 if el+er > 0 else slope), der[i] = Σ_k t_k and del[j] =
	// Σ of t_k over the positions whose source is j.
	EdgeSoftmaxBackward(blk *Block, el, er Buffer, heads int, slope, p float32, r Rand, dcoef, del, der Buffer)
	// HeadAggregate writes, for each live destination i and head h, the
	// coefficient-weighted sum s_h = coef[i, h]·x[i, head h] + Σ_{e in row
	// i} coef[NumDst.Cap+e, h]·x[Indices[e], head h] (x F32 [NumSrc.Cap,
	// heads·dim], float32 sums, self loop first, then edges in order): the
	// heads concatenated, out[i, h·dim+f] = s_h[f] with out F32
	// [NumDst.Cap, heads·dim], or with mean their average, out[i, f] =
	// (Σ_h s_h[f])·(1/heads) with out F32 [NumDst.Cap, dim].
	HeadAggregate(blk *Block, coef, x Buffer, heads, dim int, mean bool, out Buffer)
	// HeadAggregateBackward takes dout (the gradient of HeadAggregate's
	// out, F32 [NumDst.Cap, heads·dim], or [NumDst.Cap, dim] with mean)
	// and overwrites dcoef (coef's layout) for the live positions with
	// dcoef[k, h] = Σ_f dout[i, h·dim+f]·x[j_k, h·dim+f] (float64, rounded
	// once; with mean Σ_f dout[i, f]·x[j_k, h·dim+f] times 1/heads), and
	// accumulates into dx (F32 [NumSrc.Cap, heads·dim]) dx[j, h·dim+f] +=
	// w·dout[i, h·dim+f] over the positions k whose source is j, with w =
	// coef[k, h] (with mean, w = coef[k, h]·(1/heads) times dout[i, f]).
	// dx rows [0, NumSrc) must hold valid data (zero them first for a fresh
	// gradient).
	HeadAggregateBackward(blk *Block, coef, x, dout Buffer, heads, dim int, mean bool, dcoef, dx Buffer)
}

// AttentionOf is be's Attention (be itself, or the wrapper around a backend
// that has it), or an error naming be and the capability.
func AttentionOf(be Backend) (Attention, error) {
	return need[Attention](be, "the graph attention ops (backend.Attention)")
}

// Package backend is the seam between the training step and the hardware that
// runs it. A Backend owns memory (buffers) and offers a small set of coarse,
// named ops at the level of a layer's launcher: sample a layer, relabel,
// gather rows, aggregate, matmul, bias+activation+dropout, softmax
// cross-entropy and Adam.
//
// Rules every backend follows:
//   - Ops write into preallocated buffers and never allocate backend memory.
//   - Every op over a variable number of rows takes a Count: a static
//     capacity plus a live value that lives in backend memory (a device int32
//     on a GPU). No op returns a size to the host. Ops process rows
//     [0, min(live, Cap)); rows past the live count of an output are
//     unspecified unless an op says otherwise (a GPU backend keeps them zero).
//   - An op that produces a count writes the true count even when it exceeds
//     the output's capacity, and writes only the rows that fit. A driver
//     detects overflow by comparing the count with Cap.
//   - Ops are asynchronous with respect to the host. Errors are sticky: the
//     first failure of any op is recorded and returned by Sync (and by every
//     later Sync); ops issued after a failure may be skipped.
//
// The required core (Backend: Memory, Sampling, Dense, Sparse) is what
// every model and mode needs. What only some models, stores or modes use
// is a capability, a separate interface found by type assertion and
// checked when the model, store or mode is built, with an error naming
// the backend and the capability: graph attention (Attention, GAT models),
// the hot-row ops (HotRows, the hybrid mode's hot vertices), the two-tier
// gather (TieredGather, the tiered feature store), and graph capture, peer
// access, host-mapped memory, collectives, memory statistics
// (capability.go).
package backend

import (
	"fmt"

	"github.com/fanout-gnn/fanout/dtype"
	"github.com/fanout-gnn/fanout/graph"
)

// DType is the element type of a Buffer (package dtype, a leaf that the
// dataset package shares without importing the backends).
type DType = dtype.DType

// Element types.
const (
	F32  = dtype.F32  // float32
	I32  = dtype.I32  // int32
	I64  = dtype.I64  // int64
	U8   = dtype.U8   // uint8
	BF16 = dtype.BF16 // bfloat16, held as uint16 bit patterns (feature tables: Gather converts to float32)
)

// ToBF16 rounds float32 values to bfloat16 (dtype.ToBF16).
func ToBF16(src []float32) []uint16 { return dtype.ToBF16(src) }

// BF16Bits is one float32 rounded to bfloat16's bits (dtype.BF16Bits).
func BF16Bits(v float32) uint16 { return dtype.BF16Bits(v) }

// BF16Float is the float32 value of bfloat16 bits (dtype.BF16Float).
func BF16Float(h uint16) float32 { return dtype.BF16Float(h) }

// Buffer is a typed array in backend memory. Buffers are created by Alloc,
// Upload or View and are owned by the backend that made them.
type Buffer interface {
	DType() DType
	Len() int // elements
}

// Count is a live row (or element) count that lives in backend memory: the
// int32 at element Off of Buf, with a static capacity Cap known to the host.
type Count struct {
	Buf Buffer // I32
	Off int
	Cap int
}

// Rand names a stream of Philox random numbers for an op. The counter-based
// key is (Seed, epoch, step, Stream, index, slot); epoch and step are read
// from Clock, an I32 buffer [2] = {epoch, step} in backend memory, so a
// replayed graph advances them on the device.
type Rand struct {
	Seed   uint64
	Stream uint32 // layer index for sampling; a distinct stream per dropout site
	Clock  Buffer // I32 [2]: epoch, step
	// Keys, when set, is I32 [rows]: the Philox index of row i of a
	// row-wise op (BiasActDropout) is Keys[i] instead of i. Training keys
	// dropout by vertex id, so a vertex draws the same mask whichever row,
	// batch share or device it lands on.
	Keys Buffer
}

// Graph is topology resident in backend memory (CSR).
type Graph interface {
	NumNodes() int64
	NumEdges() int64
}

// Block is one sampled layer in backend memory, in CSR form by destination.
// Destination vertices come first among the sources: source row i < NumDst is
// destination i.
type Block struct {
	NumDst   Count  // live destinations; Cap = destination capacity
	NumEdges Count  // live sampled edges; Cap = edge capacity
	NumSrc   Count  // live sources (destinations first); Cap = source capacity
	Indptr   Buffer // I32 [NumDst.Cap+1] edge offsets per destination
	Nbrs     Buffer // I32 [NumEdges.Cap] global neighbour ids, as sampled
	Indices  Buffer // I32 [NumEdges.Cap] local source index per edge
	SrcIDs   Buffer // I32 [NumSrc.Cap] global ids of sources, destinations first
}

// AdamConfig holds Adam's hyper-parameters. WeightDecay is L2 added to the
// gradient (as torch.optim.Adam), not decoupled.
type AdamConfig struct {
	LR, Beta1, Beta2, Eps, WeightDecay float32
	// Skip, when non-nil, is an I32 flag in backend memory (element 0): the
	// update is skipped while it is non-zero. The replay driver points it at
	// its overflow flag so that a step whose envelope overflowed never
	// changes the parameters.
	Skip Buffer
}

// Backend is the required interface. See the package comment for the rules.
type Backend interface {
	// Name describes the device, e.g. "cpu (2 threads)".
	Name() string

	Memory
	Sampling
	Dense
	Sparse
}

// Memory allocates, moves and synchronises.
type Memory interface {
	// Alloc returns a zeroed buffer of n elements.
	Alloc(dt DType, n int) (Buffer, error)
	// Upload returns a buffer holding data ([]float32, []int32, []int64 or
	// []uint8). A backend may use the slice in place (the CPU backend does),
	// so the caller must not modify it afterwards.
	Upload(data any) (Buffer, error)
	// View is elements [off, off+n) of b, sharing its memory.
	View(b Buffer, off, n int) Buffer
	// Free releases a buffer made by Alloc or Upload. Views need no Free.
	Free(b Buffer)
	// Write copies src (a slice of b's element type) into b at element off.
	Write(b Buffer, off int, src any)
	// Read copies elements of b starting at off into dst (a slice of b's
	// element type); it waits for pending ops.
	Read(dst any, b Buffer, off int)
	// Fill sets every element of b to v (converted to b's type).
	Fill(b Buffer, v float64)
	// Sync waits for all pending ops and returns the first error recorded.
	Sync() error
	// UploadGraph makes topology resident. The CPU backend uses csr in
	// place; the caller must not modify it afterwards.
	UploadGraph(csr *graph.CSR) (Graph, error)
}

// Sampling builds blocks.
type Sampling interface {
	// SampleLayer samples, for each of the first NumDst live ids in dst (I32
	// global vertex ids), up to fanout distinct neighbours uniformly without
	// replacement (fanout < 0: all neighbours; 0: none), with the Philox
	// stream r (index = vertex id, slot = draw). It writes out.Indptr,
	// out.Nbrs and out.NumEdges, and copies dst into the first NumDst
	// entries of out.SrcIDs. The choice of neighbours equals the CPU
	// reference sampler's (package sample) exactly.
	SampleLayer(g Graph, dst Buffer, nDst Count, fanout int, r Rand, out *Block)
	// Relabel assigns local ids: destinations keep 0..NumDst-1; each new
	// neighbour gets the next id in order of first appearance in Nbrs
	// (edge order). It writes out.SrcIDs (after the destinations),
	// out.NumSrc and out.Indices.
	Relabel(g Graph, out *Block)
}

// Dense holds row-wise and matrix ops. All matrices are row-major float32.
type Dense interface {
	// Gather copies rows: out[i, :] = table[ids[i], :] for i < n; table is
	// [rows, dim] (F32 or I32); out is [n.Cap, dim] of the same type.
	Gather(table Buffer, dim int, ids Buffer, n Count, out Buffer)
	// Convert copies x into y of the same length, changing the element
	// type: F32 to BF16 rounds to nearest even, BF16 to F32 widens exactly,
	// and a like type copies.
	Convert(x, y Buffer)
	// Linear: y[:n] = x[:n]·w (+ y[:n] when accumulate); x [cap, in],
	// w [in, out], y [cap, out]. With accumulate, rows of y past the live
	// count are left untouched (callers accumulate into views whose later
	// rows are live data); without, their contents afterwards are
	// unspecified (a GPU multiplying the whole capacity may write them).
	// The same holds for dx in LinearBackwardData. x and w may both be
	// BF16 (bfloat16 operands, even in and out): the products and sums are
	// float32, and y is F32 or BF16 (the float32 results rounded). x and
	// dy of LinearBackwardWeight may be BF16 likewise (dw stays F32).
	Linear(x Buffer, n Count, w Buffer, in, out int, y Buffer, accumulate bool)
	// LinearBackwardData: dx[:n] = dy[:n]·wᵀ (+ dx[:n] when accumulate).
	LinearBackwardData(dy Buffer, n Count, w Buffer, in, out int, dx Buffer, accumulate bool)
	// LinearBackwardWeight: dw = x[:n]ᵀ·dy[:n] (+ dw when accumulate).
	LinearBackwardWeight(x, dy Buffer, n Count, in, out int, dw Buffer, accumulate bool)
	// BiasActDropout: y = dropout(act(x + bias)) on rows [:n], dim columns.
	// bias may be nil. act is ReLU when relu is set, identity otherwise.
	// With p > 0 each element is kept with probability 1-p and scaled by
	// 1/(1-p): element (row, col) is kept iff word col%4 of Philox(index =
	// row, slot = col/4) in stream r is >= rng.DropThreshold(p); mask (U8
	// [cap, dim]) records the elements the gradient passes through: 1 iff
	// kept and, with ReLU, positive (that is, iff y > 0), else 0. With p = 0
	// mask is unused and may be nil. p must lie in [0, 1). x and y may be the
	// same buffer. y may be BF16 (bfloat16 activations, half the bytes): the
	// results rounded to nearest even, the mask that of the unrounded ones.
	// x may be BF16 (widened as read), also in place over a BF16 y.
	BiasActDropout(x Buffer, n Count, dim int, bias Buffer, relu bool, p float32, r Rand, mask, y Buffer)
	// BiasActDropoutBackward: on rows [:n], dx = dy·mask/(1-p) when p > 0
	// (the mask holds the ReLU's gate too), else dy·[y > 0 if relu]; dbias
	// (when non-nil) = column sums of dx over rows [:n] (overwritten). mask
	// is read only when p > 0 and y only when relu and p = 0 (each may be nil
	// otherwise); y may be BF16. dy and dx may be the same buffer. dx may
	// be BF16 (a rounded copy for bfloat16 products; then it must not
	// overlap dy), and dbias then sums the values before rounding.
	BiasActDropoutBackward(dy, y Buffer, n Count, dim int, relu bool, p float32, mask, dx, dbias Buffer)
	// SoftmaxCrossEntropy over rows [:n] of logits [cap, classes] with I32
	// labels: loss (F32 [1]) = the rows' summed loss over max(den, 1);
	// dlogits = its gradient; correct (Count-like, I32 at correct.Off) =
	// rows whose argmax equals the label. den is n when den.Buf is nil (the
	// mean loss); a rank of a data-parallel group passes the whole batch's
	// live seeds, so that its rows' gradients are those one device computes
	// for them. Rows with label < 0 are ignored (no loss, no gradient, not
	// counted) but still divide.
	SoftmaxCrossEntropy(logits Buffer, labels Buffer, n, den Count, classes int, loss, dlogits Buffer, correct Count)
	// DotSum overwrites out[0] (F32 [1]) with the sum over rows [:n] and
	// dim columns of a[i, j]·b[i, j] (a, b F32 [n.Cap, dim]), added in a
	// fixed order (the same bits every run).
	DotSum(a, b Buffer, n Count, dim int, out Buffer)
	// Argmax writes the index of each row's largest logit (I32 [cap]); the
	// first such index on ties (SoftmaxCrossEntropy's correct uses the same
	// rule).
	Argmax(logits Buffer, n Count, classes int, out Buffer)
	// Adam updates param in place from grad with moments m and v; t is the
	// I32 step number (1-based, already incremented) used for bias
	// correction. All of param, grad, m, v are F32 of one length.
	Adam(param, grad, m, v Buffer, t Count, cfg AdamConfig)
	// AddCount adds delta to the int32 at c (a device step counter) unless
	// unless (an I32 flag, element 0) is non-nil and non-zero.
	AddCount(c Count, delta int32, unless Buffer)
	Steps
}

// Steps holds the ops that let a whole step run without the host: the
// replay driver captures them with the rest of the step.
type Steps interface {
	// SliceSeeds writes the seeds of step s = clock[1]: out[i] =
	// perm[s·batch + i] for i < min(batch, n - s·batch) (none when s·batch
	// >= n), and that number into count. perm is I32 [n]; out is I32
	// [batch]; count.Cap must be at least batch.
	SliceSeeds(perm Buffer, n, batch int, clock Buffer, out Buffer, count Count)
	// FlagOverflow records an envelope overflow: when c's live value exceeds
	// c.Cap and flag[0] is 0, it sets flag (I32 [3]) to {1, epoch, step}
	// from clock (I32 [2]). A set flag stays set until the host clears it.
	FlagOverflow(c Count, clock, flag Buffer)
	// Accumulate adds a step's loss (F32 [1]) and correct count to acc (F32
	// [2]: loss sum, correct sum) unless unless (I32 flag, element 0) is
	// non-nil and non-zero.
	Accumulate(loss Buffer, correct Count, acc, unless Buffer)
	// ScaleShare makes rows [:n] of x (F32 [cap, dim]) one rank's share of
	// a batch split across ranks: x[i, :] *= num/den, where num and den are
	// live counts (the rank's and the whole batch's seeds); when num is 0
	// the rows become 0 (whatever they held, NaN included).
	ScaleShare(x Buffer, n Count, dim int, num, den Count)
}

// Sparse holds block aggregations. An aggregation computes, for each live
// destination i of blk,
//
//	out[i, :] = selfW[i]·x[i, :] + Σ_{e in row i} edgeW[e]·x[Indices[e], :]
//
// with x [NumSrc.Cap, dim] and out [NumDst.Cap, dim]; selfW (F32
// [NumDst.Cap]) may be nil, meaning no self term.
type Sparse interface {
	// MeanWeights sets edgeW[e] = 1/deg_i for the edges of destination i
	// (sampled degree; no edges: nothing to write).
	MeanWeights(blk *Block, edgeW Buffer)
	// GCNWeights sets Kipf-Welling weights from full-graph degrees: with
	// srcDeg (F32 [NumSrc.Cap], degree of each source in the whole graph),
	// s_i the sampled degree of destination i and d_j = srcDeg[j] + 1:
	// selfW[i] = 1/d_i and edgeW[e] = (srcDeg[i]/s_i)/sqrt(d_i·d_j). With
	// all neighbours sampled this is D^-1/2 (A+I) D^-1/2.
	GCNWeights(blk *Block, srcDeg, edgeW, selfW Buffer)
	// GINWeights sets GIN's sum weights for a model whose layer was trained
	// on fanout sampled neighbours: with srcDeg (F32 [NumSrc.Cap],
	// full-graph degrees) and s_i the sampled degree of destination i,
	// edgeW[e] = min(srcDeg[i], fanout)/s_i for the edges of i, and
	// selfW[i] = 1 + eps[0] (eps F32 [1], read in backend memory so a
	// learned ε needs no host read). Sampling fanout neighbours without
	// replacement gives s_i = min(srcDeg[i], fanout): each weighs 1 (the
	// plain sampled sum); summing more (full-neighbour inference) scales
	// the sum to the expectation of the training one. fanout < 0 (trained
	// on every neighbour) gives srcDeg[i]/s_i: the sum over all
	// neighbours, estimated from a sample.
	GINWeights(blk *Block, srcDeg Buffer, fanout int, eps, edgeW, selfW Buffer)
	// Aggregate computes out as above.
	Aggregate(blk *Block, edgeW, selfW, x Buffer, dim int, out Buffer)
	// AggregateConcat writes GraphSAGE's concatenation of a destination's
	// own row and its aggregated neighbours: for each live destination i,
	// out[i, :dim] = x[i, :] and out[i, dim:] = Σ_{e in row i}
	// edgeW[e]·x[Indices[e], :], with out [NumDst.Cap, 2·dim]. One product
	// with the stacked weights [W_self; W_neigh] then does the layer's work.
	// x may be BF16 (bfloat16 activations), widened to float32 as read.
	// out may be BF16: the float32 results rounded to nearest even.
	AggregateConcat(blk *Block, edgeW, x Buffer, dim int, out Buffer)
	// AggregateConcatTable is AggregateConcat with x's rows read in place
	// from a table of every vertex: source j's row is table[SrcIDs[j], :]
	// (table F32, or BF16 widened to float32, [rows, dim]), so the block's
	// source rows need no gather. It writes what Gather into x followed by
	// AggregateConcat would, bit for bit. An id outside the table is an
	// error. out may be BF16, as in AggregateConcat.
	AggregateConcatTable(blk *Block, edgeW, table Buffer, dim int, out Buffer)
	// AggregateBackward accumulates the gradient with respect to x:
	// dx[j, :] += Σ over edges e with Indices[e] = j of edgeW[e]·dout[i, :],
	// plus selfW[i]·dout[i, :] into dx[i, :]. dx rows [0, NumSrc) must hold
	// valid data (zero them first for a fresh gradient).
	AggregateBackward(blk *Block, edgeW, selfW, dout Buffer, dim int, dx Buffer)
	// TransposeBlock writes t (see Transposed): blk's live edges grouped
	// by source, for AggregateConcatBackward.
	TransposeBlock(blk *Block, t Transposed)
	// AggregateConcatBackward is AggregateConcat's input gradient followed
	// by the backward of the activation that produced its x, one pass
	// over the sources instead of a scatter, an elementwise pass and a
	// zeroed buffer. With dcat F32 [NumDst.Cap, 2·dim], the gradient of
	// the concatenation, for each live source j of blk:
	//   g[j, :] = dcat[j, :dim] when j < NumDst (else 0), then
	//   + edgeW[e]·dcat[EdgeDst[e], dim:] for j's edges e in t's order;
	// dx[j, :] = g[j, :] passed back through act as BiasActDropoutBackward
	// does, and act.DBias = the column sums of dx over the live sources
	// (before rounding). dx is F32 or BF16 [NumSrc.Cap, dim]; its rows past
	// NumSrc are left alone. t must be TransposeBlock's for blk.
	AggregateConcatBackward(blk *Block, t Transposed, edgeW, dcat Buffer, dim int, act ActGrad, dx Buffer)
}

// CheckBF16Widths checks the widths of a bfloat16 product: each must be
// even (Linear and LinearBackwardWeight over BF16 operands).
func CheckBF16Widths(widths ...int) error {
	for _, n := range widths {
		if n%2 != 0 {
			return fmt.Errorf("width %d: bfloat16 products need even widths", n)
		}
	}
	return nil
}

// CheckColumns checks AddRows's column window: columns [off, off+dim) must
// lie inside rows of ld.
func CheckColumns(off, dim, ld int) error {
	if off < 0 || off+dim > ld {
		return fmt.Errorf("columns [%d, %d) outside rows of %d", off, off+dim, ld)
	}
	return nil
}

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
//
// Each op is described once, in ops/<interface>.yaml: its arguments with
// their types and shapes, the errors it reports and its CUDA launches. The
// op interfaces (<interface>_gen.go), every backend's argument checks and
// launches and the wrappers' forwarding are generated from the
// descriptions (go generate, package internal/wrapgen).
package backend

import (
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
	// Bipartite marks a block between two vertex spaces (a typed graph's
	// relation): its destinations are not its first sources, and
	// NumDst.Cap may exceed NumSrc.Cap. The ops that read a destination's
	// own row among the sources (AggregateConcat and its table and
	// backward forms, GCNWeights, GINWeights, a self weight in Aggregate
	// and AggregateBackward) refuse it; the attention ops take it without
	// self loops.
	Bipartite bool
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
	// LRScale, when non-nil, is an F32 factor in backend memory (element
	// 0) by which LR is multiplied when the update runs: a learning-rate
	// schedule the driver writes between steps, read by captured steps.
	LRScale Buffer
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

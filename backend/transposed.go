package backend

// Transposed holds a block's live edges grouped by source, written by
// TransposeBlock: the edges of source j are Perm[SrcPtr[j]:SrcPtr[j+1]],
// and EdgeDst[e] is the destination of edge e. Edges whose source index
// is negative or not below NumSrc are left out. The CPU backend and the
// CUDA backend with Options.Deterministic list each source's edges in
// increasing edge order; otherwise the order within a source is
// unspecified (it may change from run to run, as float atomics would).
type Transposed struct {
	SrcPtr  Buffer // I32 [NumSrc.Cap+1]; entries past the live count are unspecified
	Perm    Buffer // I32 [NumEdges.Cap]
	EdgeDst Buffer // I32 [NumEdges.Cap]
}

// ActGrad is the activation a gradient passes back through, with the
// arguments BiasActDropoutBackward takes: the ReLU, the dropout
// probability P, the layer's output Y (read only with Relu and P = 0,
// F32 or BF16), its dropout mask (U8, read only with P > 0) and the bias
// gradient DBias (F32, may be nil).
type ActGrad struct {
	Relu    bool
	P       float32
	Y, Mask Buffer
	DBias   Buffer
}

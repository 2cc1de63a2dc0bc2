package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/nn"
)

// Plan is every buffer one step needs, provisioned for an envelope of
// per-block capacities. Nothing is allocated while a Plan runs.
//
// Counts live in one I32 buffer (Counts): element 0 is the number of seeds;
// then, per hop h, the block's edge count and source count. The destination
// count of hop h is the source count of hop h-1 (hop 0's is the seed count),
// and its destination ids are hop h-1's source ids, so one hop feeds the next
// without any host involvement.
type Plan struct {
	be      backend.Backend
	Batch   int
	Fanouts []int     // per hop, from the seeds
	Caps    []nn.Caps // per block, bottom first

	Seeds  backend.Buffer // I32 [Batch]
	NSeeds backend.Count  // live seeds
	// Items are the step's training items (I32, NItems live), which
	// Task.Form turns into the seeds: by default the seeds themselves
	// (node classification); a task with other items (the link task's
	// edge ids) gives the plan its own in Head.NewBatch.
	Items  backend.Buffer
	NItems backend.Count
	Counts backend.Buffer   // I32 [1 + 2·hops]
	Blocks []*backend.Block // bottom first: Blocks[L-1-h] is hop h
	X      backend.Buffer   // F32 [Caps[0].Src, featDim]; nil with Table
	// Table, when set, is the resident feature table the model reads its
	// bottom rows from in place (nn.Batch.Table): the plan gathers none.
	Table backend.Buffer
	// Tiers, when set, is the tiered store whose cached rows the model
	// reads in place (nn.Batch.Tiered): X receives only the misses.
	Tiers featstore.InPlace
	// Labels are the seeds' labels (I32 [Batch]) where the task reads
	// them (node classification's Head.NewBatch allocates them); nil
	// otherwise.
	Labels backend.Buffer
	Clock  backend.Buffer // I32 [2]: epoch, step
	AdamT  backend.Count  // I32 Adam step number (in Counts' tail)
	Global backend.Count  // I32 live seeds of the whole batch across ranks (= NSeeds alone)
	One    backend.Count  // I32 constant 1 (a one-row count)
	// Shared marks a plan of one rank of a data-parallel group: the loss
	// and its gradient are scaled by NSeeds/Global (see parallel.go).
	Shared bool
	// ReduceFlag, when set, is issued before the forward pass (the group's
	// all-reduce of the step's overflow flag, beside the forward pass), and
	// Reduce between backward and Adam (the gradients' all-reduce, which
	// waits for it); flag is the step's overflow flag or nil.
	ReduceFlag, Reduce func(flag backend.Buffer)
	// Beside, when set, is work the step does not touch that Learn issues
	// once the bottom layer's forward pass is (nn.Batch.AfterBottom), or,
	// with BesideLate, between the loss and the backward pass: the replay
	// driver puts the next step's sampling there.
	Beside     func()
	BesideLate bool
	// Tight marks an envelope sized from observed batches (the replay
	// driver's) rather than the conservative bound: a batch may overflow it.
	Tight bool
	// Task is the task's part of the plan's step (Head.NewBatch), and
	// Params the task's learnt tensors (Head.Params), which Learn updates
	// with the model's; nil until the trainer attaches them.
	Task   Batch
	Params []*nn.Param
	// Typed, in a plan of a typed dataset, are its hops (per relation and
	// type); Fanouts, Caps and Blocks are then empty, X nil.
	Typed *TypedHops

	owned []backend.Buffer
}

// NewPlan allocates a plan for caps (bottom first, one per hop) with
// feature rows of featDim values of type rowType (F32, or BF16 for a model
// that reads them so: nn.Model.ReadsBF16Rows). With featDim 0 it holds no
// feature rows: enough to sample, not to train.
func NewPlan(be backend.Backend, batch int, fanouts []int, caps []nn.Caps, featDim int, rowType backend.DType) (*Plan, error) {
	L := len(fanouts)
	if len(caps) != L {
		return nil, fmt.Errorf("plan: %d capacities for %d hops", len(caps), L)
	}
	p := &Plan{be: be, Batch: batch, Fanouts: fanouts, Caps: caps}
	a := p.allocator()
	alloc := a.alloc
	p.Seeds = alloc(backend.I32, batch)
	p.Clock = alloc(backend.I32, 2)
	p.Counts = alloc(backend.I32, 4+2*L)
	p.NSeeds = backend.Count{Buf: p.Counts, Off: 0, Cap: batch}
	p.Items, p.NItems = p.Seeds, p.NSeeds
	p.AdamT = backend.Count{Buf: p.Counts, Off: 1 + 2*L, Cap: 1 << 30}
	p.Global = backend.Count{Buf: p.Counts, Off: 2 + 2*L, Cap: 1 << 30}
	p.One = backend.Count{Buf: p.Counts, Off: 3 + 2*L, Cap: 1}
	p.Blocks = make([]*backend.Block, L)
	nDst := p.NSeeds
	for h := 0; h < L; h++ {
		c := caps[L-1-h]
		if c.Dst != nDst.Cap {
			return nil, fmt.Errorf("plan: hop %d destination capacity %d differs from the previous hop's source capacity %d", h, c.Dst, nDst.Cap)
		}
		b := &backend.Block{
			NumDst:   nDst,
			NumEdges: backend.Count{Buf: p.Counts, Off: 1 + 2*h, Cap: c.Edges},
			NumSrc:   backend.Count{Buf: p.Counts, Off: 2 + 2*h, Cap: c.Src},
			Indptr:   alloc(backend.I32, c.Dst+1),
			Nbrs:     alloc(backend.I32, c.Edges),
			Indices:  alloc(backend.I32, c.Edges),
			SrcIDs:   alloc(backend.I32, c.Src),
		}
		p.Blocks[L-1-h] = b
		nDst = b.NumSrc
	}
	if featDim > 0 {
		p.X = alloc(rowType, caps[0].Src*featDim)
	}
	if err := a.err; err != nil {
		p.Free()
		return nil, fmt.Errorf("plan: %w", err)
	}
	be.Write(p.Counts, p.One.Off, []int32{1})
	return p, nil
}

// Twin makes a plan for p's envelope with seeds, counts and blocks of its
// own (the task's batch is the caller's to attach), sharing p's Adam step
// and, unless ownRows, p's feature rows:
// the replay driver samples (and, with ownRows, gathers) the next step
// into it while p's step computes, and the other way round.
func (p *Plan) Twin(ownRows bool) (*Plan, error) {
	dim, rowType := 0, backend.F32
	if ownRows && p.X != nil {
		dim, rowType = p.X.Len()/p.Caps[0].Src, p.X.DType()
	}
	q, err := NewPlan(p.be, p.Batch, p.Fanouts, p.Caps, dim, rowType)
	if err != nil {
		return nil, err
	}
	if dim == 0 {
		q.X = p.X
	}
	q.Table, q.Tiers = p.Table, p.Tiers
	q.AdamT = p.AdamT
	if th := p.Typed; th != nil {
		// Its own hops and rows (a typed step gathers every type's).
		if q.Typed, err = th.twin(q); err != nil {
			q.Free()
			return nil, err
		}
	}
	q.Shared, q.ReduceFlag, q.Reduce, q.Tight, q.Params = p.Shared, p.ReduceFlag, p.Reduce, p.Tight, p.Params
	return q, nil
}

// Free releases the plan's buffers and its task batch.
func (p *Plan) Free() {
	if p.Task != nil {
		p.Task.Free()
		p.Task = nil
	}
	for _, b := range p.owned {
		p.be.Free(b)
	}
	p.owned = nil
}

// Alloc allocates a buffer that the plan owns (Free releases it): for a
// task's per-plan buffers.
func (p *Plan) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	b, err := p.be.Alloc(dt, max(n, 1))
	if err == nil {
		p.owned = append(p.owned, b)
	}
	return b, err
}

// planAlloc allocates a plan's buffers until the first failure, which it
// keeps (err); later calls return nil.
type planAlloc struct {
	p   *Plan
	err error
}

func (p *Plan) allocator() *planAlloc { return &planAlloc{p: p} }

func (a *planAlloc) alloc(dt backend.DType, n int) backend.Buffer {
	if a.err != nil {
		return nil
	}
	b, err := a.p.Alloc(dt, n)
	a.err = err
	return b
}

// Backend is the backend the plan's buffers live on.
func (p *Plan) Backend() backend.Backend { return p.be }

// Bytes is the plan's backend memory in bytes.
func (p *Plan) Bytes() int64 {
	var n int64
	for _, b := range p.owned {
		n += int64(b.Len() * b.DType().Size())
	}
	return n
}

// Overflow compares live counts (read from counts, the host copy of
// p.SizeCounts()) with their capacities and describes the first that
// overflowed.
func (p *Plan) Overflow(counts []int32) error {
	if p.Typed != nil {
		return p.Typed.overflow(counts) // counts: the host copy of SizeCounts
	}
	for h := range p.Fanouts {
		b := p.Blocks[len(p.Fanouts)-1-h]
		if e := int(counts[b.NumEdges.Off]); e > b.NumEdges.Cap {
			return fmt.Errorf("hop %d sampled %d edges, capacity %d", h, e, b.NumEdges.Cap)
		}
		if s := int(counts[b.NumSrc.Off]); s > b.NumSrc.Cap {
			return fmt.Errorf("hop %d has %d sources, capacity %d", h, s, b.NumSrc.Cap)
		}
	}
	return nil
}

// FlagOverflow issues the checks of every block's edge and source counts
// against their capacities, setting flag (the replay driver's) with the
// plan's clock when one overflowed.
func (p *Plan) FlagOverflow(flag backend.Buffer) {
	if p.Typed != nil {
		p.Typed.flagOverflow(p.be, p.Clock, flag)
	}
	for _, b := range p.Blocks {
		p.be.FlagOverflow(b.NumEdges, p.Clock, flag)
		p.be.FlagOverflow(b.NumSrc, p.Clock, flag)
	}
}

// ClockStep is the step element of the plan's clock, as a count that a
// captured step advances on the device.
func (p *Plan) ClockStep() backend.Count {
	return backend.Count{Buf: p.Clock, Off: 1, Cap: 1 << 30}
}

// SizeCounts is the buffer of the plan's live sizes: Counts, or a typed
// plan's own (TypedHops.Counts).
func (p *Plan) SizeCounts() backend.Buffer {
	if p.Typed != nil {
		return p.Typed.Counts
	}
	return p.Counts
}

// LiveSizes are the live sizes in counts (the host copy of SizeCounts) per
// layer, bottom first: each block's, or a typed plan's summed over its
// types and relations.
func (p *Plan) LiveSizes(counts []int32) []BlockSize {
	if th := p.Typed; th != nil {
		return th.liveSizes(counts)
	}
	out := make([]BlockSize, len(p.Blocks))
	for i, b := range p.Blocks {
		out[i] = BlockSize{float64(counts[b.NumDst.Off]), float64(counts[b.NumEdges.Off]), float64(counts[b.NumSrc.Off])}
	}
	return out
}

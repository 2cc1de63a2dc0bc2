package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/rng"
)

// TypedHops are a typed plan's sampled hops: per layer (bottom first) a
// block per relation and the vertices of every type. Layer l's
// destinations of type t are layer l+1's sources of type t (the top
// layer's: the seeds, of the target type); its sources of type t are those
// destinations first, then the vertices of type t that the relations out
// of t sampled, each once. Every size lives in one count buffer, so a
// replayed step samples with no host involvement.
type TypedHops struct {
	Fanouts [][]int            // [hop][relation], hop 0 from the seeds
	Caps    []nn.LayerCaps     // bottom first
	Rels    [][]*backend.Block // [layer][relation]
	// Compact are the relation-local views of the relations whose own
	// sources the model projects (nn.TypedBatch.Compact; nil elsewhere),
	// relabelled from Rels' type-local indices once their hop is sampled.
	Compact [][]*backend.Block // [layer][relation]
	Dst     [][]backend.Count  // [layer][type]
	Src     [][]backend.Count  // [layer][type]
	SrcIDs  [][]backend.Buffer // [layer][type] type-local ids, destinations first
	// X are the bottom layer's input rows per type, DX their gradients
	// where a learned table reads them (nil for types with features).
	X, DX []backend.Buffer
	// Counts holds per layer the types' source counts, then the
	// relations' edge counts, then a zero (the top layer's destinations of
	// types other than the target).
	Counts backend.Buffer
	// scratch receives SampleLayer's copy of the destinations (a
	// relation's block shares its source type's ids, which the
	// destinations of another type must not overwrite).
	scratch  backend.Buffer
	scratchN backend.Count
	// iota holds i at i: a type's first sources, its destinations, as
	// their own rows (a compacted relation within one type starts from
	// them).
	iota   backend.Buffer
	target int
	rels   []nn.RelSpec
	model  nn.Config // the model's (its relations and which it compacts)
	batch  *nn.TypedBatch
}

// newTypedHops allocates a typed plan's hops in p for caps (bottom
// first), fanouts per hop and relation, the model's config (its
// relations' source and destination types, and which relations it
// compacts), the types' input widths and which types learn their rows
// (wantDX).
func newTypedHops(p *Plan, caps []nn.LayerCaps, fanouts [][]int, model nn.Config, inDims []int, wantDX []bool, target int) (*TypedHops, error) {
	rels := model.Relations
	L, T, R := len(caps), len(inDims), len(rels)
	if len(fanouts) != L {
		return nil, fmt.Errorf("plan: %d hops' fanouts for %d layers", len(fanouts), L)
	}
	th := &TypedHops{Fanouts: fanouts, Caps: caps, target: target, rels: rels, model: model,
		Rels: grid[*backend.Block](L, R), Compact: grid[*backend.Block](L, R),
		Dst: grid[backend.Count](L, T), Src: grid[backend.Count](L, T), SrcIDs: grid[backend.Buffer](L, T)}
	a := p.allocator()
	alloc := a.alloc
	stride := T + R
	// The counts: per layer the types' sources and the relations' edges,
	// a zero, the scratch's count, then per layer the compacted relations'
	// own sources.
	th.Counts = alloc(backend.I32, L*stride+2+L*R)
	zero := th.zero()
	most := 1
	for l := L - 1; l >= 0; l-- {
		for t := range T {
			tc := caps[l].Types[t]
			switch {
			case l < L-1:
				th.Dst[l][t] = th.Src[l+1][t]
			case t == target:
				th.Dst[l][t] = p.NSeeds
			default:
				th.Dst[l][t] = zero
			}
			if th.Dst[l][t].Cap != tc.Dst {
				return nil, fmt.Errorf("plan: layer %d type %d: %d destinations, the layer above has %d sources", l, t, tc.Dst, th.Dst[l][t].Cap)
			}
			th.Src[l][t] = backend.Count{Buf: th.Counts, Off: l*stride + t, Cap: tc.Src}
			th.SrcIDs[l][t] = alloc(backend.I32, tc.Src)
			most = max(most, tc.Dst)
		}
		for r, rel := range rels {
			e := caps[l].Edges[r]
			th.Rels[l][r] = &backend.Block{
				NumDst:   th.Dst[l][rel.Dst],
				NumEdges: backend.Count{Buf: th.Counts, Off: l*stride + T + r, Cap: e},
				NumSrc:   th.Src[l][rel.Src],
				Indptr:   alloc(backend.I32, caps[l].Types[rel.Dst].Dst+1),
				Nbrs:     alloc(backend.I32, e),
				Indices:  alloc(backend.I32, e),
				SrcIDs:   th.SrcIDs[l][rel.Src],
				// Another type's sources: not its destinations first.
				Bipartite: rel.Src != rel.Dst,
			}
			if model.CompactsSources() {
				blk := th.Rels[l][r]
				n := model.CompactCap(caps[l], r)
				th.Compact[l][r] = &backend.Block{NumDst: blk.NumDst, NumEdges: blk.NumEdges,
					NumSrc: backend.Count{Buf: th.Counts, Off: L*stride + 2 + l*R + r, Cap: n},
					Indptr: blk.Indptr, Nbrs: blk.Indices, Indices: alloc(backend.I32, e), SrcIDs: alloc(backend.I32, n), Bipartite: true}
			}
		}
	}
	th.scratch = alloc(backend.I32, most)
	th.iota = alloc(backend.I32, most)
	th.scratchN = backend.Count{Buf: th.Counts, Off: L*stride + 1, Cap: most}
	th.X, th.DX = make([]backend.Buffer, T), make([]backend.Buffer, T)
	for t, d := range inDims {
		th.X[t] = alloc(backend.F32, caps[0].Types[t].Src*d)
		if wantDX[t] {
			th.DX[t] = alloc(backend.F32, caps[0].Types[t].Src*d)
		}
	}
	if a.err != nil {
		return nil, fmt.Errorf("plan: %w", a.err)
	}
	p.be.Fill(th.Counts, 0)
	p.be.Write(th.iota, 0, identity(most))
	th.batch = &nn.TypedBatch{Rels: th.Rels, Dst: th.Dst, Src: th.Src, X: th.X, DX: th.DX, Compact: th.Compact}
	return th, nil
}

// twin makes hops like th's in plan q (Plan.Twin).
func (th *TypedHops) twin(q *Plan) (*TypedHops, error) {
	inDims := make([]int, len(th.X))
	wantDX := make([]bool, len(th.X))
	for t, x := range th.X {
		if n := th.Caps[0].Types[t].Src; n > 0 {
			inDims[t] = x.Len() / n
		}
		wantDX[t] = th.DX[t] != nil
	}
	return newTypedHops(q, th.Caps, th.Fanouts, th.model, inDims, wantDX, th.target)
}

// sample issues every hop from the plan's seeds: per hop, each type's
// sources start as its destinations (RelabelStart); each relation samples
// its fanout of its destination type's destinations and adds the sampled
// vertices to its source type's (RelabelAdd); then the compacted
// relations number their own sources (compact).
func (th *TypedHops) sample(p *Plan, in *TypedInputs, seed uint64) {
	be := p.be
	L := len(th.Caps)
	for h := range L {
		l := L - 1 - h
		dstIDs := func(t int) backend.Buffer {
			if l < L-1 {
				return th.SrcIDs[l+1][t]
			}
			if t == th.target {
				return p.Seeds
			}
			return th.scratch
		}
		for t, tc := range th.Caps[l].Types {
			if tc.Src > 0 {
				be.RelabelStart(in.Space[t], dstIDs(t), th.Dst[l][t], th.SrcIDs[l][t], th.Src[l][t])
			}
		}
		for r, rel := range th.rels {
			if th.Caps[l].Types[rel.Dst].Dst == 0 {
				continue
			}
			blk := th.Rels[l][r]
			view := *blk
			view.SrcIDs, view.NumSrc = th.scratch, th.scratchN
			// Hop h's stream, as one-type sampling's; each relation its own
			// seed (the first the run's, so a one-type dataset seen as
			// typed samples as it does untyped).
			rnd := backend.Rand{Seed: rng.Derive(seed, r), Stream: uint32(h), Clock: p.Clock}
			be.SampleLayer(in.Rels[r], dstIDs(rel.Dst), blk.NumDst, th.Fanouts[h][r], rnd, &view)
			be.RelabelAdd(in.Space[rel.Src], blk, blk.SrcIDs, blk.NumSrc)
		}
		th.compact(be, in, l)
	}
}

// compact numbers each compacted relation's own sources at layer l, once
// the layer's type-local numbering is done: its edges' type-local indices
// relabelled into a space of their own (its source type's relabel table,
// which the next hop's RelabelStart takes back; a type's sources never
// outnumber its vertices), from none, or within one type from the
// destinations (rows 0, 1, ...: the type's first sources): SrcIDs the
// type-local rows, the others in order of first appearance, Indices the
// edges' positions among them.
func (th *TypedHops) compact(be backend.Backend, in *TypedInputs, l int) {
	for r, cb := range th.Compact[l] {
		rel := th.rels[r]
		if cb == nil || th.Caps[l].Types[rel.Dst].Dst == 0 {
			continue
		}
		dst, nDst := th.scratch, th.zero()
		if rel.Src == rel.Dst {
			dst, nDst = th.iota, th.Dst[l][rel.Dst]
		}
		space := in.Space[rel.Src]
		be.RelabelStart(space, dst, nDst, cb.SrcIDs, cb.NumSrc)
		be.RelabelAdd(space, cb, cb.SrcIDs, cb.NumSrc)
	}
}

// zero is the counts' zero (the top layer's destinations of types other
// than the target).
func (th *TypedHops) zero() backend.Count {
	return backend.Count{Buf: th.Counts, Off: len(th.Caps) * (len(th.Src[0]) + len(th.rels)), Cap: 0}
}

// gatherRows copies the bottom layer's rows of every type: features from
// the type's store, a featureless type's from its learned table.
func (th *TypedHops) gatherRows(in *TypedInputs, be backend.Backend) {
	for t, x := range th.X {
		ids, n := th.SrcIDs[0][t], th.Src[0][t]
		if n.Cap == 0 {
			continue
		}
		if f := in.Feat[t]; f != nil {
			f.Gather(ids, n, x)
		} else {
			be.Gather(in.Embed[t].W, in.Embed[t].Shape[1], ids, n, x)
		}
	}
}

// update trains the learned tables' rows the step read: Adam on those
// rows alone, with their gradients (DX), at the plan's Adam step.
func (th *TypedHops) update(in *TypedInputs, be backend.Backend, step backend.Count, adam backend.AdamConfig) {
	adam.WeightDecay = 0 // a row decays only when read: no decay, as torch's SparseAdam
	for t, p := range in.Embed {
		if p != nil && th.Src[0][t].Cap > 0 {
			be.SparseAdam(p.W, p.M, p.V, p.Shape[1], th.SrcIDs[0][t], th.Src[0][t], th.DX[t], step, adam)
		}
	}
}

// flagOverflow issues the checks of every count against its capacity.
func (th *TypedHops) flagOverflow(be backend.Backend, clock, flag backend.Buffer) {
	for l := range th.Caps {
		for _, c := range th.Src[l] {
			be.FlagOverflow(c, clock, flag)
		}
		for _, b := range th.Rels[l] {
			be.FlagOverflow(b.NumEdges, clock, flag)
		}
	}
}

// liveSizes are the layers' live sizes in counts (the host copy of
// Counts), bottom first, summed over types and relations; the top layer's
// destinations, the seeds, are not among the counts and read 0.
func (th *TypedHops) liveSizes(counts []int32) []BlockSize {
	out := make([]BlockSize, len(th.Caps))
	for l := range th.Caps {
		for t, c := range th.Src[l] {
			out[l].Src += float64(counts[c.Off])
			if l+1 < len(th.Caps) {
				out[l].Dst += float64(counts[th.Src[l+1][t].Off])
			}
		}
		for _, b := range th.Rels[l] {
			out[l].Edges += float64(counts[b.NumEdges.Off])
		}
	}
	return out
}

// grid makes an [n][m] table.
func grid[T any](n, m int) [][]T {
	g := make([][]T, n)
	for i := range g {
		g[i] = make([]T, m)
	}
	return g
}

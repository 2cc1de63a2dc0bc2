package backendtest

import (
	"strings"

	"github.com/fanout-gnn/fanout/backend"
)

// testCountAboveCapacity: a live count above Cap processes Cap rows (the
// clamp every op applies) and nothing past the buffers.
func testCountAboveCapacity(e *env) {
	const cp, in, out = 13, 9, 5
	x := e.randF32(cp*in, 1)
	w := e.randF32(in*out, 1)
	y := e.poison(cp * out)
	e.be.Linear(e.upload(x), e.count(cp+1000, cp), e.upload(w), in, out, y, false)
	want, scale := matmulRef(false, false, cp, out, in, 1, x, w, 0, nil)
	e.checkClose("Linear with count above capacity", e.readF32(y, cp*out), want, scale, tolSum, out)

	ids := []int32{3, 1, 4, 1, 5, 9, 2, 6}
	table := e.randF32(10*4, 1)
	g := e.poison(len(ids) * 4)
	e.be.Gather(e.upload(table), 4, e.upload(ids), e.count(len(ids)+50, len(ids)), g)
	wantG := make([]float32, 0, len(ids)*4)
	for _, id := range ids {
		wantG = append(wantG, table[id*4:id*4+4]...)
	}
	checkEqual(e.t, "Gather with count above capacity", e.readF32(g, len(ids)*4), wantG, 4)
}

// testStickyErrors: a bad call makes Sync return an error naming the op, and
// the error stays for later Syncs even after good calls.
func testStickyErrors(e *env) {
	const cp, in, out = 8, 4, 3
	x := e.upload(e.randF32(cp*in, 1))
	w := e.upload(e.randF32(in*out, 1))
	y := e.poison(cp * out)
	e.be.Linear(x, e.count(cp, cp), w, in, out, y, false)
	if err := e.be.Sync(); err != nil {
		e.t.Fatalf("Sync after a valid Linear: %v", err)
	}
	// Wrong dtype: x is int32.
	xi := e.upload(make([]int32, cp*in))
	e.be.Linear(xi, e.count(cp, cp), w, in, out, y, false)
	err := e.be.Sync()
	if err == nil || !strings.Contains(err.Error(), "Linear") {
		e.t.Fatalf("Linear with an int32 x: Sync returned %v, want an error naming Linear", err)
	}
	// A later good call does not clear it.
	e.be.Linear(x, e.count(cp, cp), w, in, out, y, false)
	if err2 := e.be.Sync(); err2 == nil || !strings.Contains(err2.Error(), "Linear") {
		e.t.Errorf("Sync after a later valid call returned %v, want the sticky Linear error", err2)
	}
}

// stickyCase is one bad call and the op name its error must mention (and
// arg, where set: the argument and what is wrong with it).
type stickyCase struct {
	op   string
	call func(e *env)
	arg  string
}

// stickyCases run each on a fresh backend (see Run).
var stickyCases = []stickyCase{
	{"Linear", func(e *env) { // a bfloat16 x with a float32 w
		e.be.Linear(e.alloc(backend.BF16, 8, 0), e.count(2, 2), e.alloc(backend.F32, 8, 0), 4, 2, e.poison(4), false)
	}, ""},
	{"LinearBackwardWeight", func(e *env) { // bfloat16 operands of odd width
		e.be.LinearBackwardWeight(e.alloc(backend.BF16, 6, 0), e.alloc(backend.BF16, 4, 0), e.count(2, 2), 3, 2, e.poison(6), false)
	}, ""},
	{"HeadLinear", func(e *env) { // a bfloat16 x with a float32 w
		e.att().HeadLinear(e.alloc(backend.BF16, 8, 0), e.count(2, 2), e.alloc(backend.F32, 8, 0), 2, 2, 2, e.poison(8))
	}, "w"},
	{"HeadLinearBackwardData", func(e *env) { // a bfloat16 dx of float32 operands
		e.att().HeadLinearBackwardData(e.poison(8), e.count(2, 2), e.poison(8), 2, 2, 2, e.alloc(backend.BF16, 8, 0))
	}, "dx"},
	{"HeadLinearBackwardWeight", func(e *env) { // bfloat16 operands of odd width
		e.att().HeadLinearBackwardWeight(e.alloc(backend.BF16, 6, 0), e.alloc(backend.BF16, 4, 0), e.count(2, 2), 1, 3, 2, e.poison(6))
	}, ""},
	{"Convert", func(e *env) { // lengths differ
		e.be.Convert(e.poison(6), e.alloc(backend.BF16, 5, 0))
	}, ""},
	{"ReplaceRows", func(e *env) { // a slot past the table's rows
		e.hot().ReplaceRows(e.upload([]int32{-1, 5, -1}), e.upload(e.randF32(2*4, 1)), e.count(0, 0), 4,
			e.upload([]int32{0, 1, 2}), e.count(3, 3), e.poison(12))
	}, ""},
	{"AddRows", func(e *env) { // columns past the row's width
		e.hot().AddRows(e.upload([]int32{-1, 0, -1}), e.upload(e.randF32(2*4, 1)), e.count(0, 0), 4,
			e.upload([]int32{0, 1, 2}), e.count(3, 3), e.poison(3*6), 6, 3)
	}, ""},
	{"Gather", func(e *env) { // nil ids
		e.be.Gather(e.upload(e.randF32(40, 1)), 4, nil, e.count(3, 3), e.poison(12))
	}, ""},
	{"Aggregate", func(e *env) { // out shorter than NumDst.Cap × dim
		h := e.randomBlock(10, 20)
		e.be.Aggregate(e.uploadBlock(h), e.upload(e.randF32(h.capEdges, 1)), nil,
			e.upload(e.randF32(h.capSrc*8, 1)), 8, e.poison(h.capDst*8-1))
	}, ""},
	{"AggregateConcat", func(e *env) { // out holds NumDst.Cap × dim, not × 2·dim
		h := e.randomBlock(10, 20)
		e.be.AggregateConcat(e.uploadBlock(h), e.upload(e.randF32(h.capEdges, 1)),
			e.upload(e.randF32(h.capSrc*8, 1)), 8, e.poison(h.capDst*8))
	}, ""},
	{"AggregateConcatTable", func(e *env) { // a source id past the table's rows
		h := e.randomBlock(10, 20)
		blk := e.uploadBlock(h)
		ids := make([]int32, h.capSrc)
		ids[3] = 5
		blk.SrcIDs = e.upload(ids)
		e.be.AggregateConcatTable(blk, e.upload(e.randF32(h.capEdges, 1)), e.upload(e.randF32(5*8, 1)), 8, e.poison(h.capDst*16))
	}, ""},
	{"GatherTieredMisses", func(e *env) { // out of fewer than n.Cap rows
		e.tiered().GatherTieredMisses(e.upload([]int32{-1, 0, -1, -1, -1}), e.upload(e.randF32(5*4, 1)), nil, 4,
			e.upload([]int32{0, 1, 2}), e.count(3, 3), e.poison(2*4), nil)
	}, "out"},
	{"GatherListed", func(e *env) { // an entry's position past out's rows
		e.tiered().GatherListed(e.upload(e.randF32(5*4, 1)), e.upload(e.randF32(3*4, 1)), 4,
			e.upload([]int32{0, 1, 2, -1}), e.count(2, 2), e.poison(2*4), nil)
	}, "position 2"},
	{"GatherListed", func(e *env) { // a staging row past the staging's
		e.tiered().GatherListed(e.upload(e.randF32(5*4, 1)), e.upload(e.randF32(3*4, 1)), 4,
			e.upload([]int32{0, 3}), e.count(1, 1), e.poison(2*4), nil)
	}, "row code 3"},
	{"AggregateConcatTiered", func(e *env) { // a source id past the slot table
		h := e.randomBlock(10, 20)
		blk := e.uploadBlock(h)
		ids := make([]int32, h.capSrc)
		ids[3] = 5
		blk.SrcIDs = e.upload(ids)
		e.tiered().AggregateConcatTiered(blk, e.upload(e.randF32(h.capEdges, 1)), nil, e.upload([]int32{-1, -1, -1, -1, -1}),
			e.upload(e.randF32(h.capSrc*8, 1)), 8, e.poison(h.capDst*16))
	}, "blk.SrcIDs"},
	{"HeadAggregate", func(e *env) { // a bipartite block's out sized by its sources, fewer than its destinations
		h := e.attBlock(30, 10)
		blk := e.uploadBlock(h)
		blk.Bipartite = true
		e.att().HeadAggregate(blk, e.upload(e.randF32((h.capDst+h.capEdges)*2, 1)), e.upload(e.randF32(h.capSrc*8, 1)), 2, 4,
			false, e.poison(h.capSrc*8), false)
	}, "out: buffer has"},
	{"BiasActDropout", func(e *env) { // p > 0 without a mask
		e.be.BiasActDropout(e.upload(e.randF32(12, 1)), e.count(3, 3), 4, nil, true, 0.5,
			e.rand(1, 128, 0, 0), nil, e.poison(12))
	}, ""},
	{"SoftmaxCrossEntropy", func(e *env) { // labels are float32
		e.be.SoftmaxCrossEntropy(e.upload(e.randF32(12, 1)), e.upload(e.randF32(3, 1)), e.count(3, 3), backend.Count{}, 4,
			e.poison(1), e.poison(12), e.count(0, 0))
	}, ""},
	{"Adam", func(e *env) { // m shorter than param
		p := e.upload(e.randF32(10, 1))
		e.be.Adam(p, e.upload(e.randF32(10, 1)), e.upload(e.randF32(9, 1)), e.upload(e.randF32(10, 1)),
			e.count(1, 0), backend.AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	}, ""},
	{"SliceSeeds", func(e *env) { // count.Cap below batch
		e.be.SliceSeeds(e.upload([]int32{0, 1, 2, 3}), 4, 3, e.upload([]int32{0, 0}), e.poisonI32(3), e.count(0, 2))
	}, ""},
	{"FlagOverflow", func(e *env) { // flag shorter than 3
		e.be.FlagOverflow(e.count(5, 1), e.upload([]int32{0, 0}), e.alloc(backend.I32, 2, 0))
	}, ""},
	{"Accumulate", func(e *env) { // unless is float32
		e.be.Accumulate(e.upload([]float32{1}), e.count(1, 1), e.alloc(backend.F32, 2, 0), e.upload([]float32{0}))
	}, ""},
	{"AddCount", func(e *env) { // count offset outside its buffer
		c := e.count(1, 1)
		c.Off = 100
		e.be.AddCount(c, 1, nil)
	}, ""},
	{"RelabelStart", func(e *env) { // a destination outside the space
		e.be.RelabelStart(e.edgeless(10), e.upload([]int32{3, 10, 1}), e.count(3, 3), e.poisonI32(3), e.count(0, 3))
	}, "dst[1] = 10 outside the space of 10 vertices"},
	{"RelabelAdd", func(e *env) { // a neighbour outside the space
		space, srcIDs, nSrc := e.edgeless(10), e.poisonI32(8), e.count(0, 8)
		e.be.RelabelStart(space, e.upload([]int32{3}), e.count(1, 1), srcIDs, nSrc)
		e.be.RelabelAdd(space, e.edgeBlock([]int32{4, 3, -1, 5}, 4), srcIDs, nSrc)
	}, "blk.Nbrs[2] = -1 outside the space of 10 vertices"},
	{"BuildExclusion", func(e *env) { // a positive's destination outside the graph
		e.be.BuildExclusion(e.edgeless(10), e.upload([]int32{0, 1, 2, 10}), e.count(2, 2), true, e.alloc(backend.I64, backend.ExclusionSize(2), 0))
	}, "ends[3] = 10 outside the graph of 10 vertices"},
	{"SparseAdam", func(e *env) { // a row past the table
		cfg := adamConfigs()[0]
		e.be.SparseAdam(e.upload(e.randF32(5*2, 1)), e.alloc(backend.F32, 5*2, 0), e.alloc(backend.F32, 5*2, 0), 2,
			e.upload([]int32{0, 5}), e.count(2, 2), e.upload(e.randF32(2*2, 1)), e.count(1, 0), cfg)
	}, "ids[1] = 5 outside table of 5 rows"},
	{"SparseAdam", func(e *env) { // step 0, not skipped
		cfg := adamConfigs()[0]
		e.be.SparseAdam(e.upload(e.randF32(5*2, 1)), e.alloc(backend.F32, 5*2, 0), e.alloc(backend.F32, 5*2, 0), 2,
			e.upload([]int32{0, 4}), e.count(2, 2), e.upload(e.randF32(2*2, 1)), e.count(0, 0), cfg)
	}, "step t = 0, want >= 1"},
}

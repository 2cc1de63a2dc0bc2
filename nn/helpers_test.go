package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/graph"
)

// newCPU returns a 2-thread CPU backend closed at the end of the test.
func newCPU(t testing.TB) backend.Backend { return cpuBackend(t) }

// cpuBackend is newCPU as itself, with every capability's ops.
func cpuBackend(t testing.TB) *cpu.Backend {
	t.Helper()
	be := cpu.New(2)
	t.Cleanup(func() { be.Close() })
	return be
}

// syncOK fails the test on a sticky backend error.
func syncOK(t testing.TB, be backend.Backend) {
	t.Helper()
	if err := be.Sync(); err != nil {
		t.Fatalf("backend error: %v", err)
	}
}

// hostBlock is a block drawn by hand: live arrays plus capacities above them.
type hostBlock struct {
	indptr  []int32 // [nDst+1]
	indices []int32 // [nEdges] local source index
	srcIDs  []int32 // [nSrc] global ids, destinations first
	nDst    int
	caps    Caps
}

func (h hostBlock) nEdges() int { return len(h.indices) }
func (h hostBlock) nSrc() int   { return len(h.srcIDs) }

// garbage marks entries past the live counts, which no op may read.
const garbage = 1 << 30

// upload writes h into freshly allocated block buffers of capacity h.caps;
// entries past the live counts hold garbage.
func (h hostBlock) upload(t testing.TB, be backend.Backend) *backend.Block {
	t.Helper()
	alloc := func(n int, live []int32) backend.Buffer {
		b, err := be.Alloc(backend.I32, n)
		if err != nil {
			t.Fatal(err)
		}
		full := make([]int32, n)
		for i := range full {
			full[i] = garbage
		}
		copy(full, live)
		be.Write(b, 0, full)
		t.Cleanup(func() { be.Free(b) })
		return b
	}
	nbrs := make([]int32, h.nEdges())
	for e, j := range h.indices {
		nbrs[e] = h.srcIDs[j]
	}
	counts := alloc(3, []int32{int32(h.nDst), int32(h.nEdges()), int32(h.nSrc())})
	return &backend.Block{
		NumDst:   backend.Count{Buf: counts, Off: 0, Cap: h.caps.Dst},
		NumEdges: backend.Count{Buf: counts, Off: 1, Cap: h.caps.Edges},
		NumSrc:   backend.Count{Buf: counts, Off: 2, Cap: h.caps.Src},
		Indptr:   alloc(h.caps.Dst+1, h.indptr),
		Nbrs:     alloc(h.caps.Edges, nbrs),
		Indices:  alloc(h.caps.Edges, h.indices),
		SrcIDs:   alloc(h.caps.Src, h.srcIDs),
	}
}

// goldenBlock has 4 live destinations (caps 6) with degrees 3, 1, 0, 4,
// 8 live edges (caps 11), 7 live sources (caps 9). Destination 3 has
// destinations 0 and 1 among its neighbours.
func goldenBlock() hostBlock {
	return hostBlock{
		indptr:  []int32{0, 3, 4, 4, 8},
		indices: []int32{4, 5, 1, 6, 0, 1, 4, 6},
		srcIDs:  []int32{10, 3, 7, 0, 5, 12, 2},
		nDst:    4,
		caps:    Caps{Dst: 6, Edges: 11, Src: 9},
	}
}

// sampleGraph is an undirected 14-vertex graph with varied degrees (vertex 13
// is isolated).
func sampleGraph() *graph.CSR {
	adj := [][]int32{
		{1, 2, 3, 4, 5}, {0, 2, 6}, {0, 1, 7, 8}, {0}, {0, 9}, {0, 10, 11},
		{1}, {2, 12}, {2}, {4, 10}, {5, 9, 11, 12}, {5, 10}, {7, 10}, {},
	}
	g := &graph.CSR{NumNodes: int64(len(adj)), Indptr: []int64{0}}
	for _, ns := range adj {
		g.Indices = append(g.Indices, ns...)
		g.Indptr = append(g.Indptr, int64(len(g.Indices)))
	}
	return g
}

// degrees returns the F32 degree table of g.
func degrees(g *graph.CSR) []float32 {
	d := make([]float32, g.NumNodes)
	for v := range d {
		d[v] = float32(g.Degree(int64(v)))
	}
	return d
}

// sampledBatch samples len(fanouts) blocks from seeds on the backend
// (fanouts[h] at hop h; the block of hop h is Blocks[L-1-h]) with caps
// padded above the worst case, and returns them with their caps.
func sampledBatch(t testing.TB, be backend.Backend, g *graph.CSR, seeds []int32, fanouts []int, seed uint64) ([]*backend.Block, []Caps) {
	return sampledBatchMasked(t, be, g, seeds, fanouts, seed, nil)
}

// sampledBatchMasked is sampledBatch whose bottom hop, when slot is not
// nil, samples no neighbours for the vertices v with slot[v] >= 0
// (backend MaskGraph), as the hybrid mode's hot vertices.
func sampledBatchMasked(t testing.TB, be backend.Backend, g *graph.CSR, seeds []int32, fanouts []int, seed uint64, slot []int32) ([]*backend.Block, []Caps) {
	t.Helper()
	L := len(fanouts)
	gb, err := be.UploadGraph(g)
	if err != nil {
		t.Fatal(err)
	}
	bottom := gb
	if slot != nil {
		hot, err := backend.HotRowsOf(be)
		if err != nil {
			t.Fatal(err)
		}
		if bottom, err = hot.MaskGraph(gb, upload(t, be, slot)); err != nil {
			t.Fatal(err)
		}
	}
	clock := upload(t, be, []int32{0, 0})
	counts := upload(t, be, make([]int32, 2*L+1))
	be.Write(counts, 0, []int32{int32(len(seeds))})
	dstCap := len(seeds) + 1
	dst := uploadPadded(t, be, seeds, dstCap)
	nDst := backend.Count{Buf: counts, Off: 0, Cap: dstCap}
	blocks := make([]*backend.Block, L)
	caps := make([]Caps, L)
	maxDeg := 0
	for v := int64(0); v < g.NumNodes; v++ {
		maxDeg = max(maxDeg, int(g.Degree(v)))
	}
	for h := 0; h < L; h++ {
		k := fanouts[h]
		if k < 0 || k > maxDeg {
			k = maxDeg
		}
		c := Caps{Dst: nDst.Cap, Edges: nDst.Cap*k + 1}
		c.Src = c.Dst + c.Edges
		blk := &backend.Block{
			NumDst:   nDst,
			NumEdges: backend.Count{Buf: counts, Off: 1 + 2*h, Cap: c.Edges},
			NumSrc:   backend.Count{Buf: counts, Off: 2 + 2*h, Cap: c.Src},
			Indptr:   alloc(t, be, backend.I32, c.Dst+1),
			Nbrs:     alloc(t, be, backend.I32, c.Edges),
			Indices:  alloc(t, be, backend.I32, c.Edges),
			SrcIDs:   alloc(t, be, backend.I32, c.Src),
		}
		r := backend.Rand{Seed: seed, Stream: uint32(h), Clock: clock}
		gh := gb
		if h == L-1 {
			gh = bottom
		}
		be.SampleLayer(gh, dst, nDst, fanouts[h], r, blk)
		be.Relabel(gh, blk)
		blocks[L-1-h], caps[L-1-h] = blk, c
		dst, nDst = blk.SrcIDs, blk.NumSrc
	}
	syncOK(t, be)
	return blocks, caps
}

func alloc(t testing.TB, be backend.Backend, dt backend.DType, n int) backend.Buffer {
	t.Helper()
	b, err := be.Alloc(dt, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Free(b) })
	return b
}

// upload copies data ([]float32, []int32 or []uint8) into a new buffer.
func upload[T float32 | int32 | uint8 | uint16](t testing.TB, be backend.Backend, data []T) backend.Buffer {
	t.Helper()
	var dt backend.DType
	switch any(data).(type) {
	case []float32:
		dt = backend.F32
	case []int32:
		dt = backend.I32
	case []uint16:
		dt = backend.BF16
	default:
		dt = backend.U8
	}
	b := alloc(t, be, dt, len(data))
	be.Write(b, 0, data)
	return b
}

// uploadPadded is upload of live padded with garbage up to n elements.
func uploadPadded(t testing.TB, be backend.Backend, live []int32, n int) backend.Buffer {
	full := make([]int32, n)
	for i := range full {
		full[i] = garbage
	}
	copy(full, live)
	return upload(t, be, full)
}

// readF32 reads a whole F32 buffer.
func readF32(be backend.Backend, b backend.Buffer) []float32 {
	out := make([]float32, b.Len())
	be.Read(out, b, 0)
	return out
}

// readI32 reads a whole I32 buffer.
func readI32(be backend.Backend, b backend.Buffer) []int32 {
	out := make([]int32, b.Len())
	be.Read(out, b, 0)
	return out
}

// randMatrix returns rows*cols values uniform in [-1, 1), with rows from
// live on set to NaN (dead rows that no op may read).
func randMatrix(r *rand.Rand, rows, live, cols int) []float32 {
	m := make([]float32, rows*cols)
	for i := range m {
		if i < live*cols {
			m[i] = float32(2*r.Float64() - 1)
		} else {
			m[i] = float32(math.NaN())
		}
	}
	return m
}

// dot is Σ a[i]·b[i] over the first n elements, in float64.
func dot(a, b []float32, n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

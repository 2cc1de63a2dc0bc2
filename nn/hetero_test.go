package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// heteroSchema: papers cite papers, authors write papers, and papers are
// written by authors (rev_writes). RGAT has two heads of two columns in
// its hidden layer, two averaged heads at the top.
func heteroSchema(kind string, inPaper, inAuthor int) Config {
	c := Config{Kind: kind, InDim: inPaper, Hidden: 4, Classes: 3, Layers: 2,
		Types:     []TypeSpec{{"paper", inPaper}, {"author", inAuthor}},
		Relations: []RelSpec{{"cites", 0, 0}, {"writes", 1, 0}, {"rev_writes", 0, 1}}}
	if kind == KindRGAT {
		c.Heads, c.OutHeads = 2, 2
	}
	return c
}

// typedShape is a two-layer typed batch over heteroSchema's types and
// relations: per layer (bottom first) and type its live destinations and
// sources (a layer's sources of a type are the layer below's
// destinations), per layer, relation and destination the local sources
// of its edges, and the seeds' labels.
type typedShape struct {
	dst, src [][]int
	edges    [][][][]int32
	labels   []int32
}

// handShape is drawn by hand: the top layer's two seed papers, sampled
// from four papers and three authors; the bottom layer's four papers and
// three authors, from six papers and four authors. A destination has no
// edges, several one.
var handShape = typedShape{
	dst: [][]int{{4, 3}, {2, 0}},
	src: [][]int{{6, 4}, {4, 3}},
	edges: [][][][]int32{
		{ // bottom
			{{1, 4}, {0, 5}, {2}, {3, 0, 1}}, // cites: 4 papers <- papers
			{{0}, {1, 2}, {}, {3}},           // writes: 4 papers <- authors
			{{0, 5}, {1}, {2, 3}},            // rev_writes: 3 authors <- papers
		},
		{ // top
			{{2, 3}, {0}},    // cites: 2 seeds <- papers
			{{0, 1}, {2, 0}}, // writes: 2 seeds <- authors
			{},               // rev_writes: no author destinations at the top
		},
	},
	labels: []int32{1, 0},
}

// denseShape has eight seed papers, and every destination three to six
// edges from distinct sources (drawn with a fixed seed): attention has
// several scores per destination to weigh, and enough destinations that
// some have scores on both sides of LeakyReLU's kink (where all lie on
// one side, the destination's own score shifts them alike and the softmax
// does not see it: a_dst's derivative is 0). RGAT's checks use it.
func denseShape() typedShape {
	sh := typedShape{dst: [][]int{{12, 8}, {8, 0}}, src: [][]int{{20, 12}, {12, 8}}, labels: []int32{1, 0, 2, 2, 0, 1, 1, 0}}
	rels := [][2]int{{0, 0}, {1, 0}, {0, 1}} // heteroSchema's relations (source, destination)
	rnd := rand.New(rand.NewPCG(7, 8))
	for l := range 2 {
		var layer [][][]int32
		for _, r := range rels {
			var rows [][]int32
			for range sh.dst[l][r[1]] {
				var row []int32
				for _, j := range rnd.Perm(sh.src[l][r[0]])[:3+rnd.IntN(4)] {
					row = append(row, int32(j))
				}
				rows = append(rows, row)
			}
			layer = append(layer, rows)
		}
		sh.edges = append(sh.edges, layer)
	}
	return sh
}

// compactBlock is h's relation-local view (TypedBatch.Compact): its
// distinct sources (after its destinations with dstFirst: a relation
// within one type) in order of first appearance, their type-local rows as
// its ids, capacity src.
func compactBlock(h hostBlock, src int, dstFirst bool) hostBlock {
	c := hostBlock{indptr: h.indptr, nDst: h.nDst, caps: Caps{Dst: h.caps.Dst, Edges: h.caps.Edges, Src: src}}
	at := map[int32]int32{}
	for i := 0; dstFirst && i < h.nDst; i++ {
		at[int32(i)] = int32(i)
		c.srcIDs = append(c.srcIDs, int32(i))
	}
	for _, j := range h.indices {
		k, ok := at[j]
		if !ok {
			k = int32(len(c.srcIDs))
			at[j] = k
			c.srcIDs = append(c.srcIDs, j)
		}
		c.indices = append(c.indices, k)
	}
	return c
}

// typedBatch uploads a batch of shape sh for cfg (heteroSchema's types and
// relations) with random input rows. Live counts are below the
// capacities, whose rows hold garbage.
func typedBatch(t *testing.T, be backend.Backend, cfg Config, sh typedShape) (*Batch, []LayerCaps) {
	t.Helper()
	return typedBatchWith(t, be, cfg, sh, compactBlock)
}

// typedBatchWith is typedBatch with view making the compacted relations'
// views (compactBlock, or another numbering of their sources).
func typedBatchWith(t *testing.T, be backend.Backend, cfg Config, sh typedShape, view func(hostBlock, int, bool) hostBlock) (*Batch, []LayerCaps) {
	t.Helper()
	count := func(n, c int) backend.Count {
		buf, err := be.Alloc(backend.I32, 1)
		if err != nil {
			t.Fatal(err)
		}
		be.Write(buf, 0, []int32{int32(n)})
		t.Cleanup(func() { be.Free(buf) })
		return backend.Count{Buf: buf, Cap: c}
	}
	// [layer][type] live destinations and sources, and capacities one above.
	dst, src := sh.dst, sh.src
	tb := &TypedBatch{Rels: grid[*backend.Block](2, 3), Dst: grid[backend.Count](2, 2), Src: grid[backend.Count](2, 2),
		Compact: grid[*backend.Block](2, 3)}
	caps := make([]LayerCaps, 2)
	for l := range 2 {
		caps[l] = LayerCaps{Types: make([]TypeCaps, 2), Edges: make([]int, 3)}
		for ty := range 2 {
			caps[l].Types[ty] = TypeCaps{Dst: dst[l][ty] + 1, Src: src[l][ty] + 1}
			if l == 1 {
				caps[l].Types[ty].Src = caps[0].Types[ty].Dst
			}
			tb.Dst[l][ty] = count(dst[l][ty], caps[l].Types[ty].Dst)
			tb.Src[l][ty] = count(src[l][ty], caps[l].Types[ty].Src)
		}
		for r, rel := range cfg.Relations {
			h := hostBlock{indptr: []int32{0}, nDst: dst[l][rel.Dst]}
			for _, row := range sh.edges[l][r] {
				h.indices = append(h.indices, row...)
				h.indptr = append(h.indptr, int32(len(h.indices)))
			}
			for j := range src[l][rel.Src] {
				h.srcIDs = append(h.srcIDs, int32(j))
			}
			h.caps = Caps{Dst: caps[l].Types[rel.Dst].Dst, Edges: len(h.indices) + 1, Src: caps[l].Types[rel.Src].Src}
			caps[l].Edges[r] = h.caps.Edges
			tb.Rels[l][r] = h.upload(t, be)
			if cfg.CompactsSources() {
				tb.Compact[l][r] = view(h, cfg.CompactCap(caps[l], r), rel.Src == rel.Dst).upload(t, be)
				tb.Compact[l][r].Bipartite = true
			}
		}
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for ty, spec := range cfg.Types {
		x := make([]float32, caps[0].Types[ty].Src*spec.InDim)
		for i := range x {
			x[i] = float32(rnd.NormFloat64())
		}
		tb.X = append(tb.X, upload(t, be, x))
		tb.DX = append(tb.DX, upload(t, be, make([]float32, len(x))))
	}
	labels := upload(t, be, append(slices.Clone(sh.labels), -1))
	return &Batch{Typed: tb, Labels: labels}, caps
}

// TestTypedGradients: a typed model's backward pass (every relation's
// weights and bias, RGCN's roots and bases, RGAT's projections and
// attention vectors, and the bottom rows' input gradient that a learned
// embedding trains on) equals central differences of its loss, for RSAGE,
// RGCN, RGCN with two bases, RGAT (authors' rows narrower than papers', so
// the bottom layer's relations between them project each side by its own
// weight; of one width, sharing one; three averaged heads at the top;
// attention dropout at a fixed clock; MLPerf's shape: jumping knowledge's
// last layer as the head), with batch and layer normalisation of the
// hidden layer (their scales and shifts too), and with jumping knowledge's
// head over the target's layers (cat, max, last).
func TestTypedGradients(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"rgat", heteroSchema(KindRGAT, 3, 2)},
		{"rgat-one-width", heteroSchema(KindRGAT, 3, 3)},
		{"rgat-out-heads-3", func() Config { c := heteroSchema(KindRGAT, 3, 2); c.OutHeads = 3; return c }()},
		{"rgat-attn-dropout", func() Config { c := heteroSchema(KindRGAT, 3, 2); c.AttnDropout = 0.3; return c }()},
		{"rgat-batchnorm", func() Config { c := heteroSchema(KindRGAT, 3, 3); c.Norm = NormBatch; return c }()},
		{"rgat-jk-last-layernorm", func() Config { c := heteroSchema(KindRGAT, 3, 2); c.JK, c.Norm = JKLast, NormLayer; return c }()},
		{"rsage", heteroSchema(KindRSAGE, 3, 2)},
		{"rgcn", heteroSchema(KindRGCN, 3, 2)},
		{"rgcn-bases", func() Config { c := heteroSchema(KindRGCN, 3, 3); c.Bases = 2; return c }()},
		{"rsage-batchnorm", func() Config { c := heteroSchema(KindRSAGE, 3, 2); c.Norm = NormBatch; return c }()},
		{"rgcn-layernorm", func() Config { c := heteroSchema(KindRGCN, 3, 2); c.Norm = NormLayer; return c }()},
		{"rsage-jk-cat", func() Config { c := heteroSchema(KindRSAGE, 3, 2); c.JK = JKCat; return c }()},
		{"rgcn-jk-max", func() Config { c := heteroSchema(KindRGCN, 3, 2); c.JK = JKMax; return c }()},
		{"rsage-jk-last-norm", func() Config { c := heteroSchema(KindRSAGE, 3, 2); c.JK, c.Norm = JKLast, NormLayer; return c }()},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := newCPU(t)
			m, err := NewModel(be, c.cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			sh := handShape
			if c.cfg.Kind == KindRGAT {
				spreadAttention(t, be, m)
				sh = denseShape()
			}
			b, caps := typedBatch(t, be, c.cfg, sh)
			if err := m.ReserveTyped(caps); err != nil {
				t.Fatal(err)
			}
			// A fixed clock: attention dropout draws the same masks in
			// every pass.
			rnd := backend.Rand{Seed: 11, Clock: upload(t, be, []int32{0, 3})}
			lossOf := func() float64 {
				// Training passes (batch normalisation by the batch's
				// statistics); no dropout but attention's, so every pass
				// is the same.
				_, _ = m.Loss(b, m.Forward(b, true, rnd))
				v := make([]float32, 1)
				be.Read(v, m.hetero.loss, 0)
				syncOK(t, be)
				return float64(v[0])
			}
			lossOf()
			m.Backward(b)
			syncOK(t, be)
			if err := m.Err(); err != nil {
				t.Fatal(err)
			}
			grads := map[string][]float32{}
			for _, p := range m.Params() {
				g := make([]float32, p.Size())
				be.Read(g, p.G, 0)
				grads[p.Name] = g
			}
			dx := make([][]float32, len(c.cfg.Types))
			for ty := range dx {
				dx[ty] = make([]float32, b.Typed.DX[ty].Len())
				be.Read(dx[ty], b.Typed.DX[ty], 0)
			}
			syncOK(t, be)
			for _, p := range m.Params() {
				if p.Buffer {
					continue // running statistics: not trained
				}
				if c.cfg.Norm == NormBatch && strings.HasPrefix(p.Name, "layer0.") && strings.HasSuffix(p.Name, ".bias") && !strings.HasSuffix(p.Name, ".norm.bias") {
					// A bias before batch normalisation shifts every row
					// alike, which the normalisation takes out again.
					for i, g := range grads[p.Name] {
						if math.Abs(float64(g)) > 1e-6 {
							t.Errorf("%s[%d]: gradient %g before batch normalisation, want 0", p.Name, i, g)
						}
					}
					continue
				}
				if !strings.HasPrefix(p.Name, "layer1.rev_writes.") && !strings.HasPrefix(p.Name, "layer1.author.") {
					checkGradLoss(t, be, p.Name, p.W, liveIdx(p.Size()), grads[p.Name], lossOf)
					continue
				}
				// The top layer has no author rows: what makes them is
				// not used and gets no gradient.
				for i, g := range grads[p.Name] {
					if g != 0 {
						t.Fatalf("%s[%d]: gradient %g, want 0 (the top layer has no authors)", p.Name, i, g)
					}
				}
				if d := centralDiff(be, p.W, 0, fdEps, lossOf); d != 0 {
					t.Errorf("%s changes the loss (%g) though the top layer has no authors", p.Name, d)
				}
			}
			for ty, spec := range c.cfg.Types {
				live := sh.src[0][ty] * spec.InDim
				checkGradLoss(t, be, fmt.Sprintf("dx[%s]", spec.Name), b.Typed.X[ty], liveIdx(live), dx[ty], lossOf)
			}
		})
	}
}

// spreadAttention redraws RGAT's attention vectors uniformly in ±1.5 and
// its biases in [0, 0.5]. The scores of a destination's edges then spread
// over both sides of LeakyReLU's kink (where they lie on one side,
// shifting them alike, as a_dst and W_dst do, leaves the softmax
// unchanged: the derivatives to check would be rounding noise), the
// hidden rows are rarely all cut by ReLU (rows of zeros score alike), and
// a row whose attention dropout dropped every coefficient of a head is not
// left on ReLU's kink by a zero bias.
func spreadAttention(t *testing.T, be backend.Backend, m *Model) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, p := range m.Params() {
		lo, hi := 0.0, 0.0
		switch {
		case strings.HasSuffix(p.Name, ".att_src") || strings.HasSuffix(p.Name, ".att_dst"):
			lo, hi = -1.5, 1.5
		case strings.HasSuffix(p.Name, ".bias") && !strings.Contains(p.Name, ".norm."):
			lo, hi = 0, 0.5
		default:
			continue
		}
		v := make([]float32, p.Size())
		for i := range v {
			v[i] = float32(lo + (hi-lo)*rnd.Float64())
		}
		be.Write(p.W, 0, v)
	}
	syncOK(t, be)
}

// TestTypedConfig: a typed schema is checked: types that send messages
// receive some; bases need one input width; the one-type models take no
// schema; RGAT needs heads that divide the hidden width, and attention
// settings are GAT's and RGAT's alone.
func TestTypedConfig(t *testing.T) {
	c := heteroSchema(KindRSAGE, 3, 2)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	noReverse := c
	noReverse.Relations = noReverse.Relations[:2]
	if err := noReverse.Validate(); err == nil {
		t.Error("authors send writes but receive nothing: accepted")
	}
	bases := heteroSchema(KindRGCN, 3, 2)
	bases.Bases = 2
	if err := bases.Validate(); err == nil {
		t.Error("bases over input widths 3 and 2: accepted")
	}
	sage := Config{Kind: KindSAGE, InDim: 3, Hidden: 4, Classes: 2, Layers: 2, Types: c.Types}
	if err := sage.Validate(); err == nil {
		t.Error("a one-type model with a schema: accepted")
	}
	rgat := heteroSchema(KindRGAT, 3, 2)
	if err := rgat.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Heads = 3 },        // 4 hidden columns in 3 heads
		func(c *Config) { c.Heads = 0 },        // no heads
		func(c *Config) { c.OutHeads = 0 },     // no heads at the top
		func(c *Config) { c.AttnDropout = 1 },  // drops everything
		func(c *Config) { c.Kind = KindRSAGE }, // heads without attention
	} {
		c := rgat
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}

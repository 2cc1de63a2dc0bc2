package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestHeadDotBackwardWords: head_dot_bwd_v4 (float4 words, taken for
// aligned x and dx with dim % 4 == 0) writes bitwise the dx, da1 and da2
// that head_dot_bwd (floats, taken when x and dx start one float into
// their allocations) writes, over several chunks of rows, with the second
// count below and above the first.
func TestHeadDotBackwardWords(t *testing.T) {
	b := openTest(t, Options{})
	for k, c := range []struct{ heads, dim, n1, n2 int }{
		{4, 64, 900, 300}, {8, 8, 700, 1000}, {1, 128, 1000, 0}, {3, 12, 129, 65}, {4, 4, 1, 1},
	} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(k), 5))
			const cp = 1000
			w := c.heads * c.dim
			x, dx0 := randF32(r, cp*w), randF32(r, cp*w)
			d1, d2 := upload(t, b, randF32(r, cp*c.heads)), upload(t, b, randF32(r, cp*c.heads))
			a1, a2 := upload(t, b, randF32(r, w)), upload(t, b, randF32(r, w))
			n1, n2 := countBuf(t, b, c.n1, cp), countBuf(t, b, c.n2, cp)
			run := func(off int) (dx, da1, da2 []float32) {
				pad := make([]float32, off)
				xb := b.View(upload(t, b, append(slices.Clone(pad), x...)), off, cp*w)
				dxb := b.View(upload(t, b, append(slices.Clone(pad), dx0...)), off, cp*w)
				g1, g2 := alloc(t, b, backend.F32, w), alloc(t, b, backend.F32, w)
				att, err := backend.AttentionOf(b)
				if err != nil {
					t.Fatal(err)
				}
				att.HeadDotBackward(xb, d1, d2, n1, n2, c.heads, c.dim, a1, a2, dxb, true, g1, g2)
				return readF32(t, b, dxb, cp*w), readF32(t, b, g1, w), readF32(t, b, g2, w)
			}
			vx, va1, va2 := run(0)
			sx, sa1, sa2 := run(1)
			if !slices.Equal(vx, sx) || !slices.Equal(va1, sa1) || !slices.Equal(va2, sa2) {
				t.Fatalf("float4 and float kernels differ: dx %v, da1 %v, da2 %v",
					slices.Equal(vx, sx), slices.Equal(va1, sa1), slices.Equal(va2, sa2))
			}
			if slices.Equal(vx[:w], dx0[:w]) {
				t.Fatal("dx of row 0 unchanged")
			}
		})
	}
}

// TestHeadDotRows: HeadDot over more rows than its grid has warps on any
// device (so that the grouped kernels' warps take two rows a pass, and
// stride) agrees with the CPU backend to the rounding of one float32, on
// the float4 and float kernels.
func TestHeadDotRows(t *testing.T) {
	b := openTest(t, Options{})
	host := cpu.New(2)
	defer host.Close()
	for k, c := range []struct{ heads, dim int }{{4, 8}, {4, 64}, {3, 5}, {8, 4}} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(k), 9))
			const cp, live = 100003, 100000
			w := c.heads * c.dim
			x, a := randF32(r, cp*w), randF32(r, w)
			got := make(map[string][]float32)
			for name, be := range map[string]backend.Backend{"cuda": b, "cpu": host} {
				att, err := backend.AttentionOf(be)
				if err != nil {
					t.Fatal(err)
				}
				out := alloc(t, be, backend.F32, cp*c.heads)
				att.HeadDot(upload(t, be, x), countBuf(t, be, live, cp), c.heads, c.dim, upload(t, be, a), out)
				got[name] = readF32(t, be, out, live*c.heads)
			}
			for i, want := range got["cpu"] {
				row, h := i/c.heads, i%c.heads
				var mag float64
				for f := h * c.dim; f < (h+1)*c.dim; f++ {
					mag += math.Abs(float64(x[row*w+f]) * float64(a[f]))
				}
				if d := math.Abs(float64(got["cuda"][i] - want)); d > 2.4e-7*math.Abs(float64(want))+1e-12*mag {
					t.Fatalf("out[%d] = %v, CPU backend %v", i, got["cuda"][i], want)
				}
			}
		})
	}
}

// listLengths are the positions (self loop included) of the first
// destinations of TestAttentionListLengths: both sides of the softmax
// kernels' limits for a lane (8 positions) and for a group (16), and of
// the positions a warp keeps in registers (64), lists far past them, and
// one position only.
var listLengths = []int{1, 2, 7, 8, 9, 10, 15, 16, 17, 18, 31, 32, 33, 63, 64, 65, 66, 129, 150, 301}

// withListLengths redraws g's block: its first destinations get
// listLengths' positions, the others 0 to 11 edges (sources as
// newDetCase draws them: hubs, a few outside the live range).
func withListLengths(g *gatCase, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 79))
	h := g.h
	h.indices, h.indptr = nil, make([]int32, h.nd+1)
	for i := range h.nd {
		deg := r.IntN(12)
		if i < len(listLengths) {
			deg = listLengths[i] - 1
		}
		for range deg {
			j := int32(r.IntN(h.ns))
			switch u := r.Float64(); {
			case u < 0.2:
				j = int32(r.IntN(8)) * int32(h.ns/8)
			case u < 0.22:
				j = int32(h.ns + r.IntN(3))
			case u < 0.24:
				j = -1
			}
			h.indices = append(h.indices, j)
		}
		h.indptr[i+1] = int32(len(h.indices))
	}
	h.ne = len(h.indices)
}

// TestAttentionListLengths: the attention ops over destinations whose
// lists take each path of the softmax kernels (a lane, a group of lanes,
// a warp with the positions in registers, a warp loading them again)
// agree with the CPU backend within rounding, atomic and deterministic,
// heads concatenated and averaged, on blocks of one vertex space and
// bipartite ones; the deterministic outputs are bitwise the same at other
// capacities (other launches: the grids, the softmax's tasks a warp from
// 4 to 32 on an H200, HeadAggregate's column slices and its backward's
// position slices follow the capacities).
func TestAttentionListLengths(t *testing.T) {
	b := openTest(t, Options{Deterministic: true})
	atomic := openTest(t, Options{})
	host := cpu.New(2)
	defer host.Close()
	for k, tc := range []struct {
		nd, ns, heads, dim int
		mean, bip          bool
		pad                int // the other capacities' padding
	}{{40, 500, 4, 64, false, false, 4000}, {300, 900, 4, 47, true, false, 10000},
		{60, 400, 1, 16, false, true, 4000}, {2000, 3000, 3, 8, true, false, 45000},
		{50, 30, 8, 8, false, true, 9000}} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			g := newGATCase(uint64(k), tc.nd, tc.ns, 1, tc.heads, tc.dim, tc.mean, tc.bip)
			withListLengths(g, uint64(k))
			first := g.run(t, b, 3, false)
			other := g.run(t, b, tc.pad, false)
			for _, name := range gatOutputs {
				if !slices.Equal(other[name], first[name]) {
					t.Errorf("other capacities: %s differs bitwise", name)
				}
			}
			for what, got := range map[string]map[string][]float32{"CPU backend": g.run(t, host, 3, false),
				"atomic kernels": g.run(t, atomic, 3, false)} {
				for _, name := range gatOutputs {
					for i, v := range got[name] {
						if d := math.Abs(float64(v - first[name][i])); !(d <= 1e-4*(1+math.Abs(float64(v)))) {
							t.Fatalf("%s[%d]: deterministic %v, %s %v", name, i, first[name][i], what, v)
						}
					}
				}
			}
		})
	}
}

// TestAttPerWarp: the softmax kernels' tasks a warp are a power of two
// from 4 to 32, the largest that still gives attWarps warps an SM (4
// when none does): 32 for a bottom block's 206k (destination, head)
// pairs, 4 for a middle block's 33.5k and a top block's 4k on 132 SMs.
func TestAttPerWarp(t *testing.T) {
	for _, c := range []struct {
		tasks int64
		sms   int
		want  int64
	}{{51495 * 4, 132, 32}, {8385 * 4, 132, 4}, {1024 * 4, 132, 4}, {0, 132, 4}, {141009, 132, 32},
		{41200, 132, 8}, {72400, 132, 16}, {1 << 40, 132, 32}, {135137, 132, 32}, {135136, 132, 16}} {
		if got := attPerWarp(c.tasks, c.sms); got != c.want {
			t.Errorf("attPerWarp(%d, %d) = %d, want %d", c.tasks, c.sms, got, c.want)
		}
	}
}

// TestFlatWords: the flat kernels take heads whose width is no whole
// number of float4 words in rows that are, up to flatHeads heads and 128
// words a row, aligned buffers only; the grouped kernels keep every other
// shape.
func TestFlatWords(t *testing.T) {
	for _, c := range []struct {
		heads, dim int
		aligned    bool
		suf        string
		words      int
	}{{4, 47, true, "2", 47}, {4, 19, true, "2", 19}, {2, 6, true, "2", 3}, {4, 113, true, "4", 113},
		{4, 47, false, "", 0}, {4, 64, true, "", 0}, {1, 47, true, "", 0}, {3, 5, true, "", 0},
		{8, 19, true, "", 0}, {4, 3, true, "", 0}, {4, 129, true, "", 0}, {2, 130, true, "4", 65}} {
		suf, words, ok := flatWords(c.heads, c.dim, c.aligned)
		if suf != c.suf || words != c.words || ok != (c.suf != "") {
			t.Errorf("flatWords(%d, %d, %v) = %q, %d, %v; want %q, %d", c.heads, c.dim, c.aligned, suf, words, ok, c.suf, c.words)
		}
	}
}

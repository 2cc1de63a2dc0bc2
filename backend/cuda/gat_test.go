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
				att.HeadDotBackward(xb, d1, d2, n1, n2, c.heads, c.dim, a1, a2, dxb, g1, g2)
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

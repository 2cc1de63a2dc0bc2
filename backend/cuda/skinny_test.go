package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// skinnyCase is a narrow product: capacity, live rows, in and out.
type skinnyCase struct{ cap, live, in, out int }

// skinnyCases: products-sim's GAT bottom layer (el over the sources, er
// over the destinations, 100 features, 4 heads), in not a multiple of 4,
// rows of more than 32 words, out not a power of two, one column.
var skinnyCases = []skinnyCase{
	{140000, 130616, 100, 4}, {60000, 51495, 100, 4}, {5000, 4321, 37, 8}, {3000, 2999, 260, 1},
	{2000, 1777, 1024, 8}, {700, 650, 64, 3},
}

// TestSkinnyProducts: Linear (accumulating into rows that hold data) and
// LinearBackwardWeight with narrow outputs agree with float64 references
// to float32 rounding of the terms' magnitude (checkTC's tolerance), leave
// the rows past the live count bit for bit, and issue no cuBLAS call and
// no host sync.
func TestSkinnyProducts(t *testing.T) {
	b := openTest(t, Options{})
	for k, s := range skinnyCases {
		t.Run(fmt.Sprintf("%+v", s), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(k), 61))
			x, w, dy, y0 := randF32(r, s.cap*s.in), randF32(r, s.in*s.out), randF32(r, s.cap*s.out), randF32(r, s.cap*s.out)
			xb, wb, dyb, y := upload(t, b, x), upload(t, b, w), upload(t, b, dy), upload(t, b, y0)
			dw0 := randF32(r, s.in*s.out)
			dw, n := upload(t, b, dw0), countBuf(t, b, s.live, s.cap)
			must(t, b)
			before := b.Stats()
			b.Linear(xb, n, wb, s.in, s.out, y, true)
			b.LinearBackwardWeight(xb, dyb, n, s.in, s.out, dw, false)
			if st := b.Stats(); st.Gemms != before.Gemms || st.HostSyncs != before.HostSyncs {
				t.Fatalf("%d cuBLAS calls and %d host syncs, want none", st.Gemms-before.Gemms, st.HostSyncs-before.HostSyncs)
			}
			checkTC(t, "Linear", readF32(t, b, y, s.cap*s.out), y0, s.live, s.out, true, func(i, o int) (float64, float64) {
				return dotRef(s.in, func(c int) (float32, float32) { return x[i*s.in+c], w[c*s.out+o] })
			})
			checkTC(t, "LinearBackwardWeight", readF32(t, b, dw, s.in*s.out), dw0, s.in, s.out, false, func(c, o int) (float64, float64) {
				return dotRef(s.live, func(i int) (float32, float32) { return x[i*s.in+c], dy[i*s.out+o] })
			})
		})
	}
}

// skinnyData is the host side of a narrow product's operands.
type skinnyData struct {
	in, out           int
	x, w, dy, y0, dw0 []float32 // x, dy, y0 of the largest capacity
	yBuf, dwBuf       backend.Buffer
	xBuf, wBuf, dyBuf backend.Buffer
	n                 backend.Count
}

// issue uploads the operands to b for capacity cp with x starting off
// floats into its allocation (off = 1: not 16-byte aligned), y and dw
// holding y0 and dw0, and issues Linear and LinearBackwardWeight.
func (d *skinnyData) issue(t *testing.T, b *Backend, cp, off, live int, acc bool) {
	xs := append(make([]float32, off), d.x[:cp*d.in]...)
	d.xBuf = b.View(upload(t, b, xs), off, cp*d.in)
	d.wBuf, d.dyBuf = upload(t, b, d.w), upload(t, b, d.dy[:cp*d.out])
	d.yBuf, d.dwBuf = upload(t, b, d.y0[:cp*d.out]), upload(t, b, d.dw0)
	d.n = countBuf(t, b, live, cp)
	b.Linear(d.xBuf, d.n, d.wBuf, d.in, d.out, d.yBuf, acc)
	b.LinearBackwardWeight(d.xBuf, d.dyBuf, d.n, d.in, d.out, d.dwBuf, acc)
}

// read returns y's live rows and dw.
func (d *skinnyData) read(t *testing.T, b *Backend, live int) (y, dw []float32) {
	return readF32(t, b, d.yBuf, live*d.out), readF32(t, b, d.dwBuf, d.in*d.out)
}

// TestSkinnyBitwise: the live rows of narrow products give the same bits
// whatever the capacity, the mode (CapacityGemm, TF32x3, Deterministic)
// and x's alignment (floats instead of float4 words), and in a replayed
// graph after its live count changed; accumulating gives the old values
// plus the products, rounded once.
func TestSkinnyBitwise(t *testing.T) {
	for k, s := range []skinnyCase{{5000, 3001, 100, 4}, {3000, 2500, 36, 8}, {1000, 999, 8, 1}} {
		t.Run(fmt.Sprintf("%+v", s), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(k), 67))
			d := &skinnyData{in: s.in, out: s.out, x: randF32(r, s.cap*s.in), w: randF32(r, s.in*s.out),
				dy: randF32(r, s.cap*s.out), y0: randF32(r, s.cap*s.out), dw0: randF32(r, s.in*s.out)}
			b := openTest(t, Options{})
			d.issue(t, b, s.live, 0, s.live, false)
			wantY, wantDW := d.read(t, b, s.live)
			for _, opt := range []Options{{}, {CapacityGemm: true}, {TF32x3: true}, {Deterministic: true}} {
				bo := openTest(t, opt)
				for _, cp := range []int{s.live, s.cap} {
					for _, off := range []int{0, 1} {
						what := fmt.Sprintf("%+v capacity %d offset %d", opt, cp, off)
						d.issue(t, bo, cp, off, s.live, false)
						y, dw := d.read(t, bo, s.live)
						sameBits(t, what+" y", y, wantY)
						sameBits(t, what+" dw", dw, wantDW)
						d.issue(t, bo, cp, off, s.live, true)
						y, dw = d.read(t, bo, s.live)
						sameBits(t, what+" accumulated y", y, addF32(d.y0[:s.live*s.out], wantY))
						sameBits(t, what+" accumulated dw", dw, addF32(d.dw0, wantDW))
					}
				}
			}
			skinnyReplay(t, b, d, s)
		})
	}
}

// skinnyReplay captures the products at capacity s.cap with s.live rows,
// replays them, then changes the count on the device to fewer rows and
// replays again: each replay writes what eager ops write for its count.
func skinnyReplay(t *testing.T, b *Backend, d *skinnyData, s skinnyCase) {
	fewer := s.live / 3
	d.issue(t, b, s.cap, 0, fewer, false)
	wantY, wantDW := d.read(t, b, fewer)
	d.issue(t, b, s.cap, 0, s.live, false)
	eagerY, eagerDW := d.read(t, b, s.live)
	g := captureGraph(t, b, func() {
		b.Linear(d.xBuf, d.n, d.wBuf, d.in, d.out, d.yBuf, false)
		b.LinearBackwardWeight(d.xBuf, d.dyBuf, d.n, d.in, d.out, d.dwBuf, false)
	})
	defer g.Close()
	b.Fill(d.yBuf, 0)
	b.Fill(d.dwBuf, 0)
	g.Launch()
	y, dw := d.read(t, b, s.live)
	sameBits(t, "replayed y", y, eagerY)
	sameBits(t, "replayed dw", dw, eagerDW)
	b.Write(d.n.Buf, 0, []int32{int32(fewer)})
	g.Launch()
	y, dw = d.read(t, b, fewer)
	sameBits(t, "replayed y, fewer rows", y, wantY)
	sameBits(t, "replayed dw, fewer rows", dw, wantDW)
}

// addF32 is a + b element-wise in float32.
func addF32(a, b []float32) []float32 {
	s := make([]float32, len(a))
	for i := range a {
		s[i] = a[i] + b[i]
	}
	return s
}

// sameBits requires got and want to be bitwise equal.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %g (%#x), want %g (%#x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// BenchmarkSkinny times the narrow products of products-sim's GAT bottom
// layer (100 features, 4 heads, a 5% envelope): the scores over the
// sources and over the destinations, and their weights' gradients; the
// bandwidth counts x's live rows.
func BenchmarkSkinny(b *testing.B) {
	const cp, in, out = 137147, 100, 4
	for _, op := range []string{"Linear", "LinearBackwardWeight"} {
		for _, live := range []int{130616, 51495} {
			b.Run(fmt.Sprintf("%s/rows=%d", op, live), func(b *testing.B) {
				be := openTest(b, Options{})
				x, w, y := alloc(b, be, backend.F32, cp*in), alloc(b, be, backend.F32, in*out), alloc(b, be, backend.F32, cp*out)
				be.Fill(x, 0.25)
				be.Fill(w, 0.5)
				be.Fill(y, 0.125)
				n := countBuf(b, be, live, cp)
				f := func() { be.Linear(x, n, w, in, out, y, false) }
				if op == "LinearBackwardWeight" {
					f = func() { be.LinearBackwardWeight(x, y, n, in, out, w, false) }
				}
				measure(b, be, int64(live)*in*4, f)
			})
		}
	}
}

// TestSkinnyForwardGrid: the forward kernel's grid is one wave (the blocks
// the device holds at once, from the driver's occupancy: at least one a
// multiprocessor, at most the 2,048 threads one holds), or a thread a row
// where there are fewer rows; the occupancy is asked once.
func TestSkinnyForwardGrid(t *testing.T) {
	b := openTest(t, Options{})
	c := b.begin("test")
	defer c.end()
	const in, out = 100, 4
	smem := skinnyFwdSmem(out, in)
	name := skinnyKernel("fwd", out, in, &buffer{dt: backend.F32, ptr: 0})
	wave := c.residentBlocks(name, 256, smem)
	if wave < b.dev.sms || wave > b.dev.sms*2048/256 {
		t.Fatalf("%d blocks resident on %d multiprocessors", wave, b.dev.sms)
	}
	if g := c.skinnyFwdGrid(name, 1<<24, smem); int(g.x) != wave {
		t.Fatalf("grid of %d blocks for 16M rows, want one wave of %d", g.x, wave)
	}
	if g := c.skinnyFwdGrid(name, 1000, smem); g.x != 4 {
		t.Fatalf("grid of %d blocks for 1,000 rows, want 4 (a thread a row)", g.x)
	}
	if len(b.resident) != 1 || !c.ok {
		t.Fatalf("%d occupancies cached (ok %t), want 1", len(b.resident), c.ok)
	}
}

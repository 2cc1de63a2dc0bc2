package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

func testGather(e *env) {
	for _, dim := range []int{1, 3, 6, 12, 16, 33} {
		const rows, cp, live = 50, 40, 29
		ids := make([]int32, cp)
		for i := range ids {
			ids[i] = int32(e.rnd.IntN(rows))
		}
		for i := live; i < cp; i++ {
			ids[i] = 1 << 30 // past the count: must not be read
		}
		// float32 table
		tf := e.randF32(rows*dim, 10)
		out := e.poison(cp * dim)
		e.be.Gather(e.upload(tf), dim, e.upload(ids), e.count(live, cp), out)
		checkEqual(e.t, fmt.Sprintf("Gather float32 dim=%d", dim), e.readF32(out, live*dim), gatherRef(tf, ids[:live], dim), dim)
		// int32 table
		ti := make([]int32, rows*dim)
		for i := range ti {
			ti[i] = int32(e.rnd.Uint32())
		}
		outI := e.poisonI32(cp * dim)
		e.be.Gather(e.upload(ti), dim, e.upload(ids), e.count(live, cp), outI)
		checkEqual(e.t, fmt.Sprintf("Gather int32 dim=%d", dim), e.readI32(outI, live*dim), gatherRef(ti, ids[:live], dim), dim)
		// bfloat16 table into bfloat16 rows, as they are: at offset 0 and
		// at an odd element (every row a 2-byte word's alignment)
		tb := backend.ToBF16(e.randF32(rows*dim, 10))
		for _, off := range []int{0, 1} {
			poison := make([]uint16, off+cp*dim)
			for i := range poison {
				poison[i] = 0x7fc1
			}
			outB := e.be.View(e.upload(poison), off, cp*dim)
			e.be.Gather(e.upload(tb), dim, e.upload(ids), e.count(live, cp), outB)
			checkEqual(e.t, fmt.Sprintf("Gather bfloat16 rows dim=%d at %d", dim, off), e.readU16(outB, live*dim), gatherRef(tb, ids[:live], dim), dim)
		}
	}
}

// dropCase is one BiasActDropout configuration.
type dropCase struct {
	dim     int
	bias    bool
	relu    bool
	p       float32
	inPlace bool
}

var dropCases = []dropCase{
	{1, false, false, 0, false}, {7, true, true, 0, false}, {33, true, false, 0.3, false},
	{16, false, true, 0.5, true}, {17, true, true, 0.9, false}, {64, true, true, 0.25, true},
}

// dropMask is the reference mask: element (i, j) kept iff word j%4 of
// Philox(i, j/4, step, epoch<<8|stream) >= DropThreshold(p).
func dropMask(key rng.Key, rows, dim int, p float32) []uint8 {
	m := make([]uint8, rows*dim)
	thr := rng.DropThreshold(p)
	for i := range rows {
		for j := range dim {
			if p <= 0 || key.Word(uint32(i), uint32(j)) >= thr {
				m[i*dim+j] = 1
			}
		}
	}
	return m
}

func testBiasActDropout(e *env) {
	const cp, live = 45, 37
	for _, c := range dropCases {
		name := fmt.Sprintf("BiasActDropout %+v", c)
		x := e.randF32(cp*c.dim, 2)
		var bias []float32
		var biasBuf backend.Buffer
		if c.bias {
			bias = e.randF32(c.dim, 1)
			biasBuf = e.upload(bias)
		}
		r := e.rand(0xfeed1234abcd, 130, 3, 17)
		key := rng.Key{Seed: 0xfeed1234abcd, Epoch: 3, Step: 17, Stream: 130}
		xb := e.upload(x)
		y := xb
		if !c.inPlace {
			y = e.poison(cp * c.dim)
		}
		var mask backend.Buffer
		if c.p > 0 {
			mask = e.alloc(backend.U8, cp*c.dim, 77)
		}
		e.be.BiasActDropout(xb, e.count(live, cp), c.dim, biasBuf, c.relu, c.p, r, mask, y)
		wantMask := dropMask(key, live, c.dim, c.p)
		want := make([]float64, live*c.dim)
		for i := range want {
			v := float64(x[i])
			if bias != nil {
				v += float64(bias[i%c.dim])
			}
			if c.relu {
				v = math.Max(v, 0)
			}
			if c.p > 0 {
				v *= float64(wantMask[i]) / (1 - float64(c.p))
				if c.relu && !(v > 0) {
					wantMask[i] = 0 // the mask holds the ReLU's gate
				}
			}
			want[i] = v
		}
		e.checkClose(name+" y", e.readF32(y, live*c.dim), want, nil, tolElem, c.dim)
		if c.p > 0 {
			checkEqual(e.t, name+" mask", e.readU8(mask, live*c.dim), wantMask, c.dim)
		}
	}
}

func testBiasActDropoutBackward(e *env) {
	const cp, live = 45, 37
	for _, c := range dropCases {
		for _, withBias := range []bool{false, true} {
			name := fmt.Sprintf("BiasActDropoutBackward %+v dbias=%v", c, withBias)
			dy := e.randF32(cp*c.dim, 1)
			// With dropout the mask alone gates (it holds the ReLU's gate)
			// and y is not passed; without, y's sign pattern gates the ReLU.
			y := e.randF32(cp*c.dim, 1)
			mask := make([]uint8, cp*c.dim)
			for i := range mask {
				mask[i] = uint8(e.rnd.IntN(2))
			}
			var maskBuf, yBuf backend.Buffer
			if c.p > 0 {
				maskBuf = e.upload(mask)
			} else {
				yBuf = e.upload(y)
			}
			dyb := e.upload(dy)
			dx := dyb
			if !c.inPlace {
				dx = e.poison(cp * c.dim)
			}
			var dbias backend.Buffer
			if withBias {
				dbias = e.poison(c.dim)
			}
			e.be.BiasActDropoutBackward(dyb, yBuf, e.count(live, cp), c.dim, c.relu, c.p, maskBuf, dx, dbias)
			want := make([]float64, live*c.dim)
			sum, mag := make([]float64, c.dim), make([]float64, c.dim)
			for i := range want {
				g := float64(dy[i])
				if c.p > 0 {
					g *= float64(mask[i]) / (1 - float64(c.p))
				} else if c.relu && !(y[i] > 0) {
					g = 0
				}
				want[i] = g
				sum[i%c.dim] += g
				mag[i%c.dim] += math.Abs(g)
			}
			e.checkClose(name+" dx", e.readF32(dx, live*c.dim), want, nil, tolElem, c.dim)
			if withBias {
				e.checkClose(name+" dbias", e.readF32(dbias, c.dim), sum, mag, tolSum, 0)
			}
		}
	}
}

func testArgmax(e *env) {
	for _, classes := range []int{1, 2, 7, 47} {
		const cp, live = 40, 33
		logits := e.randF32(cp*classes, 5)
		for i := 0; i < cp; i += 3 { // ties (small integers): the first wins
			for j := range classes {
				logits[i*classes+j] = float32(e.rnd.IntN(3))
			}
		}
		out := e.poisonI32(cp)
		e.be.Argmax(e.upload(logits), e.count(live, cp), classes, out)
		want := make([]int32, live)
		for i := range want {
			best := 0
			for j := range classes {
				if logits[i*classes+j] > logits[i*classes+best] {
					best = j
				}
			}
			want[i] = int32(best)
		}
		checkEqual(e.t, fmt.Sprintf("Argmax classes=%d", classes), e.readI32(out, live), want, 0)
	}
}

// testAddCount: AddCount adds (capacity does not clamp) with no flag or a
// clear one, and does nothing while the unless flag is non-zero.
func testAddCount(e *env) {
	c := e.count(41, 50)
	e.be.AddCount(c, 5, nil)
	e.be.AddCount(c, -3, nil)
	if got := e.readCount(c); got != 43 {
		e.t.Errorf("AddCount: 41 + 5 - 3 gave %d", got)
	}
	// Capacity does not clamp the counter.
	e.be.AddCount(c, 100, nil)
	if got := e.readCount(c); got != 143 {
		e.t.Errorf("AddCount past capacity: got %d, want 143", got)
	}
	flag := e.upload([]int32{0, 9, 9})
	e.be.AddCount(c, 7, flag)
	if got := e.readCount(c); got != 150 {
		e.t.Errorf("AddCount with a clear flag: got %d, want 150", got)
	}
	for _, set := range []int32{1, -4} {
		e.be.Write(flag, 0, []int32{set})
		e.be.AddCount(c, 7, flag)
		if got := e.readCount(c); got != 150 {
			e.t.Errorf("AddCount with the flag set to %d: got %d, want 150 (unchanged)", set, got)
		}
	}
}

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestBiasActDropoutGrad checks dx and dbias of bias+activation+dropout (as
// the model uses it between layers and on top) against finite differences,
// with the dropout mask fixed by a fixed Rand.
func TestBiasActDropoutGrad(t *testing.T) {
	be := newCPU(t)
	const capRows, live, dim = 7, 5, 6
	counts := upload(t, be, []int32{live})
	n := backend.Count{Buf: counts, Cap: capRows}
	clock := upload(t, be, []int32{3, 17})
	for _, tc := range []struct {
		relu bool
		p    float32
	}{{true, 0}, {true, 0.4}, {false, 0}, {false, 0.4}} {
		t.Run(fmt.Sprintf("relu=%v/p=%v", tc.relu, tc.p), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			// |x + b| >= 0.25 so that no ReLU kink lies within fdEps.
			xHost := randMatrix(r, capRows, live, dim)
			for i := 0; i < live*dim; i++ {
				s := float32(1)
				if xHost[i] < 0 {
					s = -1
				}
				xHost[i] = s * (0.3 + 0.7*float32(math.Abs(float64(xHost[i]))))
			}
			bHost := make([]float32, dim)
			for i := range bHost {
				bHost[i] = float32(0.1*r.Float64() - 0.05)
			}
			x, bias := upload(t, be, xHost), upload(t, be, bHost)
			y := alloc(t, be, backend.F32, capRows*dim)
			var mask backend.Buffer
			if tc.p > 0 {
				mask = alloc(t, be, backend.U8, capRows*dim)
			}
			rnd := backend.Rand{Seed: 99, Stream: dropoutStream + 1, Clock: clock}
			R := randMatrix(r, capRows, live, dim)
			f := func() float64 {
				be.BiasActDropout(x, n, dim, bias, tc.relu, tc.p, rnd, mask, y)
				return dot(readF32(be, y), R, live*dim)
			}
			f()
			checkDropoutOutput(t, readF32(be, y), xHost, bHost, live, dim, tc.relu, tc.p)
			dx := upload(t, be, randMatrix(r, capRows, 0, dim))
			dbias := alloc(t, be, backend.F32, dim)
			be.BiasActDropoutBackward(upload(t, be, R), y, n, dim, tc.relu, tc.p, mask, dx, dbias)
			syncOK(t, be)
			checkGrad(t, be, "dx", x, liveIdx(live*dim), readF32(be, dx), f)
			checkGrad(t, be, "dbias", bias, liveIdx(dim), readF32(be, dbias), f)
		})
	}
}

// checkDropoutOutput checks that each live output is either dropped (0) or
// act(x+b)/(1-p), and that with p > 0 some but not all elements were dropped.
func checkDropoutOutput(t *testing.T, y, x, b []float32, live, dim int, relu bool, p float32) {
	t.Helper()
	dropped := 0
	for i := 0; i < live*dim; i++ {
		v := float64(x[i]) + float64(b[i%dim])
		if relu {
			v = math.Max(v, 0)
		}
		want := v / (1 - float64(p))
		switch {
		case math.Abs(float64(y[i])-want) <= 1e-5*(1+math.Abs(want)):
		case p > 0 && y[i] == 0:
			dropped++
		default:
			t.Fatalf("y[%d] = %v, want %v or dropped", i, y[i], want)
		}
	}
	if p > 0 && (dropped == 0 || dropped == live*dim) {
		t.Fatalf("p=%v dropped %d of %d elements", p, dropped, live*dim)
	}
}

// TestSoftmaxCrossEntropyGrad checks the mean loss, its gradient with
// respect to the logits, and the correct count, with an ignored label and a
// live count below capacity; and the same rows as a rank's share of a batch
// of 12 (the summed loss over 12).
func TestSoftmaxCrossEntropyGrad(t *testing.T) {
	for _, den := range []int32{0, 12} {
		t.Run(fmt.Sprintf("den=%d", den), func(t *testing.T) { testSoftmaxCrossEntropyGrad(t, den) })
	}
}

func testSoftmaxCrossEntropyGrad(t *testing.T, den int32) {
	be := newCPU(t)
	const capRows, live, classes = 7, 5, 4
	r := rand.New(rand.NewPCG(5, 6))
	lHost := randMatrix(r, capRows, live, classes)
	for i := range lHost[:live*classes] {
		lHost[i] *= 3
	}
	labels := []int32{2, 0, -1, 3, 1, garbage, garbage}
	logits := upload(t, be, lHost)
	lab := upload(t, be, labels)
	counts := upload(t, be, []int32{live, 0, den})
	n := backend.Count{Buf: counts, Cap: capRows}
	correct := backend.Count{Buf: counts, Off: 1, Cap: capRows}
	var dc backend.Count
	divide := float64(live)
	if den > 0 {
		dc, divide = backend.Count{Buf: counts, Off: 2, Cap: 100}, float64(den)
	}
	loss := alloc(t, be, backend.F32, 1)
	dl := upload(t, be, randMatrix(r, capRows, 0, classes))
	f := func() float64 {
		be.SoftmaxCrossEntropy(logits, lab, n, dc, classes, loss, dl, correct)
		return float64(readF32(be, loss)[0])
	}
	got := f()
	want, wantCorrect := 0.0, int32(0)
	for i := 0; i < live; i++ {
		if labels[i] < 0 {
			continue
		}
		row := lHost[i*classes : (i+1)*classes]
		mx, arg := math.Inf(-1), 0
		for c, v := range row {
			if float64(v) > mx {
				mx, arg = float64(v), c
			}
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(float64(v) - mx)
		}
		want += mx + math.Log(s) - float64(row[labels[i]])
		if arg == int(labels[i]) {
			wantCorrect++
		}
	}
	want /= divide
	if math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
		t.Errorf("loss %v, want %v", got, want)
	}
	if c := readI32(be, counts)[1]; c != wantCorrect {
		t.Errorf("correct %d, want %d", c, wantCorrect)
	}
	analytic := readF32(be, dl)
	for c := 0; c < classes; c++ {
		if v := analytic[2*classes+c]; v != 0 {
			t.Errorf("gradient of ignored row: dlogits[2,%d] = %v, want 0", c, v)
		}
	}
	syncOK(t, be)
	checkGrad(t, be, "dlogits", logits, liveIdx(live*classes), analytic, f)
}

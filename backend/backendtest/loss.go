package backendtest

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

func testSoftmaxCrossEntropy(e *env) {
	for _, classes := range []int{1, 2, 7, 47} {
		// den 0: the mean over the live rows (no den count); otherwise the
		// rows are a share of a batch of den (a group's rank), 0 included.
		for _, sh := range [][3]int{{40, 33, 0}, {300, 300, 0}, {8, 0, 0}, {40, 33, 130}, {8, 0, 17}} {
			cp, live, den := sh[0], sh[1], sh[2]
			name := fmt.Sprintf("SoftmaxCrossEntropy classes=%d cap=%d live=%d den=%d", classes, cp, live, den)
			logits := e.randF32(cp*classes, 6)
			for i := 0; i < cp; i += 4 { // ties: argmax is the first largest
				for j := range classes {
					logits[i*classes+j] = float32(e.rnd.IntN(2))
				}
			}
			labels := make([]int32, cp)
			for i := range labels {
				labels[i] = int32(e.rnd.IntN(classes))
				if e.rnd.IntN(5) == 0 {
					labels[i] = -1
				}
			}
			loss := e.poison(1)
			dl := e.poison(cp * classes)
			correct := e.count(-7, 0)
			dc, divide := backend.Count{}, live
			if den > 0 {
				dc, divide = e.count(den, 1<<20), den
			}
			e.be.SoftmaxCrossEntropy(e.upload(logits), e.upload(labels), e.count(live, cp), dc, classes, loss, dl, correct)
			wantLoss, wantGrad, gradScale, wantCorrect := softmaxRef(logits, labels, live, divide, classes)
			e.checkClose(name+" loss", e.readF32(loss, 1), []float64{wantLoss}, nil, tolSum, 0)
			e.checkClose(name+" dlogits", e.readF32(dl, live*classes), wantGrad, gradScale, tolElem, classes)
			if got := e.readCount(correct); got != wantCorrect {
				e.t.Errorf("%s correct: got %d, want %d", name, got, wantCorrect)
			}
		}
	}
}

// softmaxRef returns the summed loss over n rows divided by den, the
// gradient with its tolerance scale, and the number of rows whose argmax
// equals the label.
func softmaxRef(logits []float32, labels []int32, n, den, classes int) (float64, []float64, []float64, int) {
	var total float64
	grad, scale := make([]float64, n*classes), make([]float64, n*classes)
	correct := 0
	for i := range n {
		row := f64(logits[i*classes : (i+1)*classes])
		if labels[i] < 0 {
			continue
		}
		best := 0
		mx := row[0]
		for j, v := range row {
			if v > row[best] {
				best = j
			}
			mx = math.Max(mx, v)
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(v - mx)
		}
		lse := mx + math.Log(sum)
		total += lse - row[labels[i]]
		if best == int(labels[i]) {
			correct++
		}
		for j, v := range row {
			g := math.Exp(v - lse)
			if j == int(labels[i]) {
				g--
			}
			grad[i*classes+j] = g / float64(den)
			scale[i*classes+j] = (math.Abs(g) + 1e-3) / float64(den)
		}
	}
	if den > 0 {
		total /= float64(den)
	}
	return total, grad, scale, correct
}

func testAdam(e *env) {
	const size = 1000
	for ci, cfg := range adamConfigs() {
		for _, step := range []int32{1, 7} {
			name := fmt.Sprintf("Adam config %d step %d", ci, step)
			param, grad, m, v := e.randAdamInputs(size)
			pb, gb, mb, vb := e.upload(param), e.upload(grad), e.upload(m), e.upload(v)
			e.be.Adam(pb, gb, mb, vb, e.count(int(step), 0), cfg)
			wp, wm, wv, sp, sm := adamRef(param, grad, m, v, int(step), cfg)
			e.checkClose(name+" param", e.readF32(pb, size), wp, sp, tolElem, 0)
			e.checkClose(name+" m", e.readF32(mb, size), wm, sm, tolElem, 0)
			e.checkClose(name+" v", e.readF32(vb, size), wv, nil, tolElem, 0)
			checkEqual(e.t, name+" grad unchanged", e.readF32(gb, size), grad, 0)
		}
	}
}

// adamRef is torch.optim.Adam's update (L2 weight decay) in float64; the
// scales are |param'| + |update| for param and the sum of the terms'
// magnitudes for m.
func adamRef(param, grad, m, v []float32, t int, cfg backend.AdamConfig) (wp, wm, wv, sp, sm []float64) {
	n := len(param)
	wp, wm, wv = make([]float64, n), make([]float64, n), make([]float64, n)
	sp, sm = make([]float64, n), make([]float64, n)
	b1, b2 := float64(cfg.Beta1), float64(cfg.Beta2)
	bc1 := 1 - math.Pow(b1, float64(t))
	bc2 := 1 - math.Pow(b2, float64(t))
	for i := range n {
		p := float64(param[i])
		g := float64(grad[i]) + float64(cfg.WeightDecay)*p
		mi := b1*float64(m[i]) + (1-b1)*g
		vi := b2*float64(v[i]) + (1-b2)*g*g
		upd := float64(cfg.LR) / bc1 * mi / (math.Sqrt(vi)/math.Sqrt(bc2) + float64(cfg.Eps))
		wp[i], wm[i], wv[i] = p-upd, mi, vi
		sp[i] = math.Abs(p-upd) + math.Abs(upd)
		sm[i] = math.Abs(b1*float64(m[i])) + math.Abs((1-b1)*g)
	}
	return wp, wm, wv, sp, sm
}

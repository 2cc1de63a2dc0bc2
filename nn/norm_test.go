package nn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// normCases are the models of the normalisation and jumping knowledge
// tests: every kind with each normalisation, and the three heads.
var normCases = []struct {
	kind, norm, jk string
	layers         int
}{
	{KindSAGE, NormBatch, "", 2},
	{KindSAGE, NormBatch, "", 3}, // gathered input gradients through a normalised layer
	{KindSAGE, NormLayer, JKCat, 3},
	{KindGCN, NormBatch, JKMax, 2},
	{KindGCN, NormLayer, "", 2},
	{KindGIN, NormBatch, JKLast, 2},
	{KindGIN, NormLayer, JKMax, 2},
	{KindGAT, NormBatch, JKCat, 2},
	{KindGAT, NormLayer, "", 2},
	{KindSAGE, "", JKMax, 3},
}

func normConfig(kind, norm, jk string, layers int) Config {
	cfg := Config{Kind: kind, InDim: 4, Hidden: 6, Classes: 3, Layers: layers, Dropout: 0.3, Norm: norm, JK: jk,
		LearnEps: kind == KindGIN}
	if kind == KindGAT {
		cfg.Heads, cfg.OutHeads, cfg.AttnDropout = 2, 3, 0.3
	}
	return cfg
}

// TestNormJKGrad checks every learned parameter's gradient of models with
// normalisation and jumping knowledge against finite differences. The bias
// before a batch normalisation has no effect on the loss: its gradient
// must be zero up to rounding. Running statistics get no gradient.
func TestNormJKGrad(t *testing.T) {
	for _, c := range normCases {
		t.Run(fmt.Sprintf("%s-%s-%s-%d", c.kind, c.norm, c.jk, c.layers), func(t *testing.T) {
			be := newCPU(t)
			cfg := normConfig(c.kind, c.norm, c.jk, c.layers)
			fanouts := []int{3, 2, 2}[:c.layers]
			tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, fanouts)
			m := newTestModel(t, be, cfg, tb.caps)
			awayFromKinks(be, m)
			r := backend.Rand{Seed: 5, Clock: tb.clock}
			normAwayFromKinks(t, be, m, &tb.Batch, r)
			f := lossAndGrads(t, be, m, tb, r)
			largest := 0.0
			for _, p := range m.Params() {
				g := readF32(be, p.G)
				if err := tolerance.Finite(g); err != nil {
					t.Fatalf("%s's gradient: %v", p.Name, err)
				}
				largest = max(largest, maxAbs(g))
			}
			checked := 0
			for _, p := range m.Params() {
				g := readF32(be, p.G)
				switch {
				case p.Buffer:
					for i, v := range g {
						if v != 0 {
							t.Fatalf("%s[%d]: gradient %v of a buffer", p.Name, i, v)
						}
					}
				case c.norm == NormBatch && beforeBatchNorm(m, p):
					for i, v := range g {
						if err := tolerance.Within(float64(v), 0, largest, 1e-5); err != nil {
							t.Errorf("%s[%d] (before batch normalisation): gradient against 0, at the largest gradient's scale: %v", p.Name, i, err)
						}
					}
				case maxAbs(g) < 1e-6*largest:
					// Zero in exact arithmetic (GAT's destination scores
					// where every score is past LeakyReLU's kink: a constant
					// per softmax): the loss must not move either.
					for i := range g {
						if err := tolerance.Within(centralDiff(be, p.W, i, fdEps, f), 0, largest, 1e-3); err != nil {
							t.Errorf("%s[%d]: analytic %v; numeric against 0: %v", p.Name, i, g[i], err)
						}
					}
				default:
					checkGrad(t, be, p.Name, p.W, liveIdx(p.Size()), g, f)
					checked++
				}
			}
			want := 2 * c.layers // at least the norm's scale and shift of every normalised layer
			if checked < want {
				t.Errorf("%d parameters checked, want at least %d", checked, want)
			}
			syncOK(t, be)
		})
	}
}

// normAwayFromKinks sets each normalisation's shifts, bottom up, so that
// no ReLU input after it lies near its kink: for every column it looks at
// the normalised values of a training pass and puts the shift in the middle
// of their widest gap (some rows alive, some not) when that gap is wide,
// else past all of them (alive or dead throughout, by column).
func normAwayFromKinks(t *testing.T, be backend.Backend, m *Model, b *Batch, r backend.Rand) {
	for l, n := range layerNorms(m) {
		if n == nil {
			continue
		}
		l /= 2
		m.Forward(b, true, r)
		rows := int(readI32(be, b.Blocks[l].NumDst.Buf)[b.Blocks[l].NumDst.Off])
		pre := readF32(be, n.x)[:rows*n.dim] // without the bias where it kept no copy: batch normalisation absorbs it
		xh := hostNormalised(pre, rows, n.dim, n.perRow)
		shift := make([]float32, n.dim)
		for j := range n.dim {
			col := make([]float64, rows)
			for i := range rows {
				col[i] = xh[i*n.dim+j]
			}
			shift[j] = shiftAwayFromZero(col, j)
		}
		be.Fill(n.gamma.W, 1)
		be.Write(n.beta.W, 0, shift)
	}
	syncOK(t, be)
}

// layerNorms are the model's normalisations in the order a pass meets
// them: layer l's GIN MLP's at 2l, its output's at 2l+1 (nil where none).
func layerNorms(m *Model) []*normLayer {
	var ns []*normLayer
	for l, ly := range m.layers {
		var inner *normLayer
		if g, ok := ly.(*ginLayer); ok {
			inner = g.inner
		}
		ns = append(ns, inner, m.norms[l])
	}
	return ns
}

// hostNormalised is x [rows, dim] normalised per column or per row.
func hostNormalised(x []float32, rows, dim int, perRow bool) []float64 {
	out := make([]float64, rows*dim)
	n, m, at := dim, rows, func(k, t int) int { return t*dim + k }
	if perRow {
		n, m, at = rows, dim, func(k, t int) int { return k*dim + t }
	}
	for k := range n {
		var s, q float64
		for t := range m {
			s += float64(x[at(k, t)])
		}
		mean := s / float64(m)
		for t := range m {
			d := float64(x[at(k, t)]) - mean
			q += d * d
		}
		r := 1 / math.Sqrt(q/float64(m)+normEps)
		for t := range m {
			out[at(k, t)] = (float64(x[at(k, t)]) - mean) * r
		}
	}
	return out
}

// shiftAwayFromZero is a shift that keeps every v + shift at least 0.15
// from 0: minus the middle of the widest gap between sorted values when it
// is wide enough, else past the smallest (even j: alive) or the largest
// (odd j: dead) value by 0.5.
func shiftAwayFromZero(v []float64, j int) float32 {
	slices.Sort(v)
	best, at := 0.0, 0.0
	for i := 1; i < len(v); i++ {
		if g := v[i] - v[i-1]; g > best {
			best, at = g, (v[i]+v[i-1])/2
		}
	}
	switch {
	case best >= 0.3:
		return float32(-at)
	case j%2 == 0:
		return float32(-v[0] + 0.5)
	default:
		return float32(-v[len(v)-1] - 0.5)
	}
}

// maxAbs is the largest magnitude of s, which holds only finite values
// (NaN is the largest of any set holding one: Go's max).
func maxAbs(s []float32) float64 {
	m := 0.0
	for _, v := range s {
		m = max(m, math.Abs(float64(v)))
	}
	return m
}

// beforeBatchNorm reports whether p is the bias of a layer whose output is
// batch normalised.
func beforeBatchNorm(m *Model, p *Param) bool {
	for l, ly := range m.layers {
		if ly.bias() == p && m.norms[l] != nil && !m.norms[l].perRow {
			return true
		}
		if g, ok := ly.(*ginLayer); ok && g.b1 == p && g.inner != nil && !g.inner.perRow {
			return true
		}
	}
	return false
}

// TestBatchNormRunning: a training step folds the batch's statistics of
// each normalised layer into the running ones with momentum 0.1 (the
// variance made unbiased; the mean with the layer's bias as the pass had
// it, which the normalisation left out of its statistics and weight decay
// then moves), neither Adam nor weight decay touches them, and a step
// under a set skip flag leaves them.
func TestBatchNormRunning(t *testing.T) {
	be := newCPU(t)
	cfg := normConfig(KindSAGE, NormBatch, "", 3)
	tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2, 2})
	m := newTestModel(t, be, cfg, tb.caps)
	tc := upload(t, be, []int32{0})
	skip := upload(t, be, []int32{1})
	r := backend.Rand{Seed: 5, Clock: tb.clock}
	adam := backend.AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.5}
	step := func(skipped bool) {
		m.Loss(&tb.Batch, m.Forward(&tb.Batch, true, r))
		m.Backward(&tb.Batch)
		be.AddCount(backend.Count{Buf: tc, Cap: 1}, 1, nil)
		a := adam
		if skipped {
			a.Skip = skip
		}
		m.Update(backend.Count{Buf: tc, Cap: 1}, a)
	}
	for l := range 2 {
		run := readF32(be, m.norms[l].running.W)
		for j := range cfg.Hidden {
			if run[j] != 0 || run[cfg.Hidden+j] != 1 {
				t.Fatalf("layer %d: initial running statistics %v, want zeros then ones", l, run)
			}
		}
	}
	biases := make([][]float32, 2)
	for l := range biases {
		biases[l] = make([]float32, cfg.Hidden)
		for j := range biases[l] {
			biases[l][j] = 0.25 * float32(j%5-2)
		}
		be.Write(m.layers[l].bias().W, 0, biases[l])
	}
	step(false)
	syncOK(t, be)
	if equal(readF32(be, m.layers[0].bias().W), biases[0]) {
		t.Fatal("weight decay left the bias as it was: the test cannot tell which the running mean took")
	}
	n := make([]int, 2)
	for l := range n {
		n[l] = int(readI32(be, tb.Blocks[l].NumDst.Buf)[tb.Blocks[l].NumDst.Off])
	}
	for l := range 2 {
		nl := m.norms[l]
		st, run := readF32(be, nl.stats), readF32(be, nl.running.W)
		for j := range cfg.Hidden {
			wantMean := 0.1 * (float64(st[j]) + float64(biases[l][j]))
			wantVar := 0.9 + 0.1*float64(st[cfg.Hidden+j])*float64(n[l])/float64(n[l]-1)
			if err := tolerance.Within(float64(run[j]), wantMean, 1, 1e-6); err != nil {
				t.Fatalf("layer %d column %d: running mean: %v", l, j, err)
			}
			if err := tolerance.Within(float64(run[cfg.Hidden+j]), wantVar, 1, 1e-6); err != nil {
				t.Fatalf("layer %d column %d: running variance: %v", l, j, err)
			}
		}
	}
	before := readF32(be, m.norms[0].running.W)
	step(true)
	syncOK(t, be)
	if after := readF32(be, m.norms[0].running.W); !equal(after, before) {
		t.Errorf("a skipped step changed the running statistics: %v, then %v", before, after)
	}
}

// TestBatchNormEvalUsesRunning: evaluation normalises by the running
// statistics (changing them changes the logits; changing another batch's
// rows does not), training by the batch's own (the running ones do not
// matter).
func TestBatchNormEvalUsesRunning(t *testing.T) {
	be := newCPU(t)
	cfg := normConfig(KindGCN, NormBatch, "", 2)
	cfg.Dropout = 0
	tb := newTestBatch(t, be, cfg.InDim, cfg.Classes, []int{3, 2})
	m := newTestModel(t, be, cfg, tb.caps)
	live := 5 * cfg.Classes
	r := backend.Rand{Seed: 5, Clock: tb.clock}
	eval0 := readF32(be, m.Forward(&tb.Batch, false, r))[:live]
	train0 := readF32(be, m.Forward(&tb.Batch, true, r))[:live]
	run := readF32(be, m.norms[0].running.W)
	for j := range run {
		run[j] += 0.5
	}
	be.Write(m.norms[0].running.W, 0, run)
	eval1 := readF32(be, m.Forward(&tb.Batch, false, r))[:live]
	train1 := readF32(be, m.Forward(&tb.Batch, true, r))[:live]
	syncOK(t, be)
	if equal(eval0, eval1) {
		t.Errorf("evaluation logits do not depend on the running statistics: %v", eval0)
	}
	if !equal(train0, train1) {
		t.Errorf("training logits depend on the running statistics: %v, then %v", train0, train1)
	}
	if equal(eval0, train0) {
		t.Errorf("evaluation and training logits agree (%v): one of them ignores its statistics", eval0)
	}
}

// TestNormJKValidation: unknown kinds are refused naming the field, and
// normalisation or jumping knowledge with bfloat16 activations too.
func TestNormJKValidation(t *testing.T) {
	good := normConfig(KindSAGE, NormBatch, JKCat, 2)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Norm = "group" }, "Norm"},
		{func(c *Config) { c.JK = "lstm" }, "JK"},
		{func(c *Config) { c.JK = ""; c.BF16Bottom = true }, "BF16Bottom"},
		{func(c *Config) { c.Norm = ""; c.BF16Activations = true }, "BF16Activations"},
	} {
		c := good
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", c, err, tc.want)
		}
	}
}

// TestInferenceWithNorm: layer-wise inference of normalised models equals
// evaluation's Forward (batch normalisation by the running statistics,
// set away from their initial values).
func TestInferenceWithNorm(t *testing.T) {
	for _, norm := range []string{NormBatch, NormLayer} {
		t.Run(norm, func(t *testing.T) { inferenceMatchesForward(t, normConfig(KindGCN, norm, "", 2)) })
	}
}

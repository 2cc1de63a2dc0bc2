package backendtest

import "github.com/fanout-gnn/fanout/backend"

// jk is the backend's jumping knowledge ops (backend.JumpingKnowledge).
func (e *env) jk() backend.JumpingKnowledge { return capability(e, backend.JumpingKnowledgeOf) }

// testLayerMax: three layers folded into a maximum (ties to the lowest
// layer), the gradient routed back to the layer that gave each element,
// overwritten for one layer and added for another; rows past the live
// count untouched.
func testLayerMax(e *env) {
	const rows, live, dim, layers = 20, 13, 9, 3
	xs := make([][]float32, layers)
	for k := range xs {
		xs[k] = e.randF32(rows*dim, 1)
	}
	xs[1][5] = max(xs[0][5], xs[2][5]) + 1 // the largest, tied with layer 2's
	xs[2][5] = xs[1][5]
	n := e.count(live, rows)
	y, arg := e.poison(rows*dim), e.poisonI32(rows*dim)
	for k, x := range xs {
		e.jk().LayerMax(e.upload(x), n, dim, k, k == 0, y, arg)
	}
	wantY, wantArg := make([]float32, live*dim), make([]int32, live*dim)
	for t := range live * dim {
		wantY[t] = xs[0][t]
		for k := 1; k < layers; k++ {
			if xs[k][t] > wantY[t] {
				wantY[t], wantArg[t] = xs[k][t], int32(k)
			}
		}
	}
	checkEqual(e.t, "LayerMax y", e.readF32(y, live*dim), wantY, dim)
	checkEqual(e.t, "LayerMax arg", e.readI32(arg, live*dim), wantArg, dim)
	if wantArg[5] != 1 {
		e.t.Fatalf("the tie at 5 went to layer %d, want 1", wantArg[5])
	}
	dy := e.randF32(rows*dim, 1)
	dyb := e.upload(dy)
	base := e.randF32(rows*dim, 1)
	for _, acc := range []bool{false, true} {
		dx := e.upload(append([]float32(nil), base...))
		e.jk().LayerMaxBackward(dyb, arg, n, dim, 1, acc, dx)
		got := e.readF32(dx, rows*dim)
		want := make([]float32, rows*dim)
		for t := range rows * dim {
			switch {
			case t >= live*dim:
				want[t] = base[t]
			case wantArg[t] == 1 && acc:
				want[t] = base[t] + dy[t]
			case wantArg[t] == 1:
				want[t] = dy[t]
			case acc:
				want[t] = base[t]
			}
		}
		checkEqual(e.t, "LayerMaxBackward", got, want, dim)
	}
}

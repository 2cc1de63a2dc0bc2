package cuda

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestFusedLaunches: MeanWeights followed by the aggregation over its
// block and weights, AddCount followed by Accumulate, and AddCount of an
// Adam step counter followed by the Adam calls on it, each take one
// launch, and two when another op comes between (their results against
// the two kept apart are the conformance suite's MeanWeightsAggregate,
// AddCountAccumulate and AddCountAdam).
func TestFusedLaunches(t *testing.T) {
	b := openTest(t, Options{})
	blk := &backend.Block{
		NumDst:   backend.Count{Buf: upload(t, b, []int32{2, 4, 3}), Off: 0, Cap: 3},
		NumEdges: backend.Count{Buf: upload(t, b, []int32{2, 4, 3}), Off: 1, Cap: 5},
		NumSrc:   backend.Count{Buf: upload(t, b, []int32{2, 4, 3}), Off: 2, Cap: 4},
		Indptr:   upload(t, b, []int32{0, 3, 4, 4}),
		Indices:  upload(t, b, []int32{0, 1, 2, 3, 0}),
	}
	ew := upload(t, b, make([]float32, 5))
	x := upload(t, b, make([]float32, 4*8))
	out := upload(t, b, make([]float32, 3*16))
	other := upload(t, b, make([]float32, 4))
	cnt := upload(t, b, []int32{1})
	clock := upload(t, b, []int32{0})
	loss, acc := upload(t, b, []float32{0.5}), upload(t, b, []float32{0, 0})
	skip := upload(t, b, []int32{0})
	var params [2][4]backend.Buffer
	for k := range params {
		for i := range params[k] {
			params[k][i] = upload(t, b, make([]float32, 64))
		}
	}
	cfg := backend.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Skip: skip}
	launches := func(ops func()) int64 {
		must(t, b)
		b.ResetStats()
		ops()
		must(t, b)
		return b.Stats().Launches // the Fill between is a memset
	}
	between := func(apart bool) {
		if apart {
			b.Fill(other, 0)
		}
	}
	for _, apart := range []bool{false, true} {
		want := int64(1)
		if apart {
			want = 2
		}
		if n := launches(func() {
			b.MeanWeights(blk, ew)
			between(apart)
			b.AggregateConcat(blk, ew, x, 8, out)
		}); n != want {
			t.Errorf("MeanWeights then AggregateConcat (another op between: %v): %d launches, want %d", apart, n, want)
		}
		if n := launches(func() {
			b.AddCount(backend.Count{Buf: clock}, 2, nil)
			between(apart)
			b.Accumulate(loss, backend.Count{Buf: cnt}, acc, skip)
		}); n != want {
			t.Errorf("AddCount then Accumulate (another op between: %v): %d launches, want %d", apart, n, want)
		}
		if n := launches(func() {
			b.AddCount(backend.Count{Buf: cnt}, 1, skip)
			between(apart)
			for _, q := range params {
				b.Adam(q[0], q[1], q[2], q[3], backend.Count{Buf: cnt}, cfg)
			}
		}); n != want {
			t.Errorf("AddCount then two Adam calls (another op between: %v): %d launches, want %d", apart, n, want)
		}
	}
	got := make([]int32, 1)
	b.Read(got, cnt, 0)
	must(t, b)
	if got[0] != 3 {
		t.Errorf("step counter %d after two advances from 1, want 3", got[0])
	}
	b.Read(got, clock, 0)
	must(t, b)
	if got[0] != 4 {
		t.Errorf("clock %d after two advances by 2 from 0, want 4", got[0])
	}
}

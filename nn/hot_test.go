package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// TestHotRows checks the hybrid mode's hot rows in a training pass: with
// Table holding exactly what layer 0 computes for the hot destinations
// (Inference's LayerPre), Forward gives the plain pass's logits; Backward
// leaves out the hot rows' share of layer 0's weight gradient, collects
// their output gradient in Grad, and LayerPreBackward over Grad gives that
// share back, so that with it as Extra every gradient is the plain pass's.
func TestHotRows(t *testing.T) {
	for _, kind := range []string{KindSAGE, KindGCN, KindGIN, KindGAT} {
		t.Run(kind, func(t *testing.T) {
			be := newCPU(t)
			g := sampleGraph()
			n := int(g.NumNodes)
			cfg := Config{Kind: kind, InDim: 4, Hidden: 8, Classes: 3, Layers: 2}
			if kind == KindGAT {
				cfg.Heads, cfg.OutHeads = 2, 2
			}
			blocks, caps := sampledBatch(t, be, g, []int32{0, 3, 5, 6}, []int{3, 2}, 7)
			m := newTestModel(t, be, cfg, caps)
			r := rand.New(rand.NewPCG(3, 4))
			for _, p := range m.Params() {
				be.Write(p.W, 0, randMatrix(r, p.Size(), p.Size(), 1))
			}
			feat := randMatrix(r, n, n, cfg.InDim)
			bottom := download(be, blocks[0])
			x := make([]float32, caps[0].Src*cfg.InDim)
			for i, v := range bottom.srcIDs {
				copy(x[i*cfg.InDim:], feat[int(v)*cfg.InDim:(int(v)+1)*cfg.InDim])
			}
			labels := make([]int32, caps[1].Dst)
			for i := range labels {
				labels[i] = int32(i % cfg.Classes)
			}
			deg := upload(t, be, degrees(g))
			b := &Batch{Blocks: blocks, X: upload(t, be, x), Degree: deg, Labels: upload(t, be, labels)}
			grads := func() ([]float32, [][]float32) {
				logits := readF32(be, m.Forward(b, true, backend.Rand{}))
				m.Loss(b, m.act[len(m.act)-1])
				m.Backward(b)
				syncOK(t, be)
				var gs [][]float32
				for _, p := range m.Params() {
					gs = append(gs, readF32(be, p.G))
				}
				return logits, gs
			}
			wantLogits, want := grads()

			// Hot: every other destination of the bottom block.
			_, dim := cfg.dims(0)
			nDst := bottom.nDst
			slot := make([]int32, n)
			for v := range slot {
				slot[v] = -1
			}
			var hot []int32
			for i := 0; i < nDst; i += 2 {
				v := bottom.srcIDs[i]
				slot[v] = int32(len(hot))
				hot = append(hot, v)
			}
			inf, err := m.NewInference(caps[0])
			if err != nil {
				t.Fatal(err)
			}
			defer inf.Free()
			pre := alloc(t, be, backend.F32, caps[0].Dst*dim)
			if err := inf.LayerPre(0, blocks[0], upload(t, be, feat), deg, pre); err != nil {
				t.Fatal(err)
			}
			rows := readF32(be, pre)
			table := make([]float32, 2*len(hot)*dim) // second half: the rows, after base
			for s, v := range hot {
				for i := range nDst {
					if bottom.srcIDs[i] == v {
						copy(table[(len(hot)+s)*dim:], rows[i*dim:(i+1)*dim])
					}
				}
			}
			baseBuf := upload(t, be, []int32{int32(len(hot))})
			gradAcc := alloc(t, be, backend.F32, len(hot)*dim)
			b.Hot = &Hot{Slot: upload(t, be, slot), Table: upload(t, be, table), Base: backend.Count{Buf: baseBuf, Cap: 1}, Grad: gradAcc}
			gotLogits, got := grads()
			closeAll(t, "logits with hot rows", gotLogits, wantLogits)
			ws := m.LayerWeights(0)
			index := map[*Param]int{}
			for i, p := range m.Params() {
				index[p] = i
			}
			isWeight0 := map[int]bool{}
			for _, p := range ws {
				isWeight0[index[p]] = true
			}
			for i := range m.Params() {
				if !isWeight0[i] { // layer 0's bias and every layer above
					closeAll(t, fmt.Sprintf("gradient of parameter %d", i), got[i], want[i])
				}
			}
			// The hot share, from the collected output gradient.
			acc := readF32(be, gradAcc)
			dh := make([]float32, caps[0].Dst*dim)
			for s, v := range hot {
				for i := range nDst {
					if bottom.srcIDs[i] == v {
						copy(dh[i*dim:(i+1)*dim], acc[s*dim:(s+1)*dim])
					}
				}
			}
			if err := inf.LayerPre(0, blocks[0], upload(t, be, feat), deg, pre); err != nil {
				t.Fatal(err)
			}
			if err := inf.LayerPreBackward(0, blocks[0], upload(t, be, dh)); err != nil {
				t.Fatal(err)
			}
			var extra []backend.Buffer
			for _, p := range ws {
				i := index[p]
				share := readF32(be, p.G)
				sum := make([]float32, len(share))
				for k := range share {
					sum[k] = got[i][k] + share[k]
				}
				closeAll(t, fmt.Sprintf("layer 0 weight %d: cold share + hot share", i), sum, want[i])
				extra = append(extra, upload(t, be, share))
			}
			be.Fill(gradAcc, 0)
			b.Hot.Extra = extra
			_, withExtra := grads()
			for i := range want {
				closeAll(t, fmt.Sprintf("gradient %d with the hot share added", i), withExtra[i], want[i])
			}
		})
	}
}

func closeAll(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-5*max(1, math.Abs(float64(want[i])))) {
			t.Fatalf("%s [%d]: got %v, want %v", what, i, got[i], want[i])
		}
	}
}

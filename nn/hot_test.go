package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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
			be := cpuBackend(t)
			g := sampleGraph()
			n := int(g.NumNodes)
			cfg := hotConfig(kind)
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
			slot, hot := everyOtherDst(n, bottom)
			inf := newTestInference(t, m, caps[0])
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
			th := &HotTable{Ops: be, Slot: upload(t, be, slot), Table: upload(t, be, table), Base: backend.Count{Buf: baseBuf, Cap: 1}, Grad: gradAcc}
			b.Hot = th
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
			th.Extra = extra
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

// TestHotInputs checks hot vertices whose neighbour term comes from a
// table (Hot.Inputs): with the bottom hop sampled from the graph with hot
// vertices masked and the table holding what Inference.LayerNeighbours
// computes for them over the unmasked block, Forward gives the plain
// pass's logits and Backward every one of its gradients, layer 0's
// weights included: the rows are inputs of the product, not its output.
// GraphSAGE's concatenation holds the neighbour term apart, so it is the
// plain pass bitwise; the others add it to the self term in another order.
// GAT cannot take its inputs so, and says so.
func TestHotInputs(t *testing.T) {
	for _, kind := range []string{KindSAGE, KindGCN, KindGIN, KindGAT} {
		t.Run(kind, func(t *testing.T) {
			be := cpuBackend(t)
			g := sampleGraph()
			n := int(g.NumNodes)
			cfg := hotConfig(kind)
			if kind == KindGIN {
				cfg.LearnEps = true
			}
			seeds, fanouts := []int32{0, 3, 5, 6}, []int{3, 2}
			blocks, caps := sampledBatch(t, be, g, seeds, fanouts, 7)
			m := newTestModel(t, be, cfg, caps)
			if got, want := m.HotInputs(), kind != KindGAT; got != want {
				t.Fatalf("HotInputs = %t, want %t", got, want)
			}
			r := rand.New(rand.NewPCG(3, 4))
			for _, p := range m.Params() {
				be.Write(p.W, 0, randMatrix(r, p.Size(), p.Size(), 1))
			}
			feat := randMatrix(r, n, n, cfg.InDim)
			featBuf := upload(t, be, feat)
			deg := upload(t, be, degrees(g))
			labels := make([]int32, caps[1].Dst)
			for i := range labels {
				labels[i] = int32(i % cfg.Classes)
			}
			run := func(blocks []*backend.Block, hot Hot) ([]float32, [][]float32, error) {
				bottom := download(be, blocks[0])
				x := make([]float32, caps[0].Src*cfg.InDim)
				for i, v := range bottom.srcIDs {
					copy(x[i*cfg.InDim:], feat[int(v)*cfg.InDim:(int(v)+1)*cfg.InDim])
				}
				b := &Batch{Blocks: blocks, X: upload(t, be, x), Degree: deg, Labels: upload(t, be, labels)}
				if hot != nil {
					b.Hot = hot
				}
				logits := m.Forward(b, true, backend.Rand{})
				m.Loss(b, logits)
				m.Backward(b)
				if err := m.Err(); err != nil {
					return nil, nil, err
				}
				out := readF32(be, logits)
				syncOK(t, be)
				var gs [][]float32
				for _, p := range m.Params() {
					gs = append(gs, readF32(be, p.G))
				}
				return out, gs, nil
			}
			wantLogits, want, err := run(blocks, nil)
			if err != nil {
				t.Fatal(err)
			}

			// Hot: every other destination of the bottom block; their
			// neighbour terms over the plain block, after a base.
			plain := download(be, blocks[0])
			in, _ := cfg.dims(0)
			slot, hot := everyOtherDst(n, plain)
			inf := newTestInference(t, m, caps[0])
			nb := alloc(t, be, backend.F32, caps[0].Dst*in)
			err = inf.LayerNeighbours(0, blocks[0], featBuf, deg, nb)
			if kind == KindGAT {
				if err == nil || !strings.Contains(err.Error(), "does not aggregate") {
					t.Fatalf("GAT's neighbour terms: %v", err)
				}
				hb := &HotTable{Ops: be, Slot: upload(t, be, slot), Table: nb, Base: backend.Count{Buf: upload(t, be, []int32{0}), Cap: 1}, InputRows: true}
				if _, _, err := run(blocks, hb); err == nil || !strings.Contains(err.Error(), "hot inputs") {
					t.Fatalf("GAT with hot inputs: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows := readF32(be, nb)
			table := make([]float32, 2*len(hot)*in) // second half: the rows, after base
			for s, v := range hot {
				for i := range plain.nDst {
					if plain.srcIDs[i] == v {
						copy(table[(len(hot)+s)*in:], rows[i*in:(i+1)*in])
					}
				}
			}
			masked, _ := sampledBatchMasked(t, be, g, seeds, fanouts, 7, slot)
			if got := download(be, masked[0]); got.nEdges() >= plain.nEdges() {
				t.Fatalf("the masked bottom block has %d edges, the plain one %d", got.nEdges(), plain.nEdges())
			}
			hb := &HotTable{Ops: be, Slot: upload(t, be, slot), Table: upload(t, be, table), Base: backend.Count{Buf: upload(t, be, []int32{int32(len(hot))}), Cap: 1}, InputRows: true}
			gotLogits, got, err := run(masked, hb)
			if err != nil {
				t.Fatal(err)
			}
			check := closeAll
			if kind == KindSAGE {
				check = equalAll
			}
			check(t, "logits with hot inputs", gotLogits, wantLogits)
			for i := range want {
				check(t, fmt.Sprintf("gradient of %s", m.Params()[i].Name), got[i], want[i])
			}
		})
	}
}

func equalAll(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s [%d]: got %v, want %v (bitwise)", what, i, got[i], want[i])
		}
	}
}

// everyOtherDst makes every other destination of a block hot: the slot
// table of n vertices and the hot vertices in slot order.
func everyOtherDst(n int, b hostBlock) ([]int32, []int32) {
	slot := make([]int32, n)
	for v := range slot {
		slot[v] = -1
	}
	var hot []int32
	for i := 0; i < b.nDst; i += 2 {
		v := b.srcIDs[i]
		slot[v] = int32(len(hot))
		hot = append(hot, v)
	}
	return slot, hot
}

func newTestInference(t *testing.T, m *Model, c Caps) *Inference {
	t.Helper()
	inf, err := m.NewInference(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inf.Free)
	return inf
}

// hotConfig is the two-layer model of kind the hot-row tests train.
func hotConfig(kind string) Config {
	cfg := Config{Kind: kind, InDim: 4, Hidden: 8, Classes: 3, Layers: 2}
	if kind == KindGAT {
		cfg.Heads, cfg.OutHeads = 2, 2
	}
	return cfg
}

package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/export"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// TestExportGATComputesLikeGATConv: a trained GAT (4 hidden heads, 2
// averaged output heads) exported, then run over the whole graph as PyG's
// GATConv computes (x·lin.weightᵀ viewed as [heads, dim], LeakyReLU(0.2) of
// att_src·z_j + att_dst·z_i softmaxed over the neighbours with self loops
// removed and one added, heads concatenated or, in the last layer,
// averaged, + bias, ReLU between layers), gives fanout eval's logits.
func TestExportGATComputesLikeGATConv(t *testing.T) {
	dir, data := t.TempDir(), genTiny(t)
	run := quickRun(t, "--data", data, "--model", "gat", "--heads", "4", "--out-heads", "2")
	ckpt, st, lg := filepath.Join(run, checkpoint.BestCheckpoint), filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "logits.npy")
	if code, stdout, stderr := fanout(t, "export", "--checkpoint", ckpt, st); code != 0 {
		t.Fatalf("export: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := fanout(t, "eval", "--checkpoint", ckpt, "--data", data, "--device", "cpu", "--full-eval", "--logits", lg); code != 0 {
		t.Fatalf("eval: exit %d: %s%s", code, stdout, stderr)
	}
	ts, meta, err := export.ReadSafetensors(st)
	if err != nil {
		t.Fatal(err)
	}
	num := func(k string) int {
		v, err := strconv.Atoi(meta[k])
		if err != nil {
			t.Fatalf("metadata %s: %q", k, meta[k])
		}
		return v
	}
	layers, heads, outHeads, hidden, classes := num("num_layers"), num("heads"), num("out_heads"), num("hidden_channels"), num("out_channels")
	if meta["pyg_model"] != "torch_geometric.nn.models.GAT" || heads != 4 || outHeads != 2 ||
		meta["last_conv"] != fmt.Sprintf("torch_geometric.nn.conv.GATConv(%d, %d, heads=2, concat=False)", hidden, classes) {
		t.Fatalf("metadata %v", meta)
	}
	read := func(name string) any {
		d, _, err := npy.ReadFile(filepath.Join(data, name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	indptr, feat := read("indptr").([]int64), read("feat").([]float32)
	var indices []int64
	switch ix := read("indices").(type) {
	case []int32:
		for _, v := range ix {
			indices = append(indices, int64(v))
		}
	case []int64:
		indices = ix
	}
	n := len(indptr) - 1
	x := make([]float64, len(feat))
	for i, v := range feat {
		x[i] = float64(v)
	}
	in := len(feat) / n
	for l := 0; l < layers; l++ {
		last := l == layers-1
		H, C := heads, hidden/heads
		if last {
			H, C = outHeads, classes
		}
		w, as, ad, b := ts[fmt.Sprintf("convs.%d.lin.weight", l)], ts[fmt.Sprintf("convs.%d.att_src", l)], ts[fmt.Sprintf("convs.%d.att_dst", l)], ts[fmt.Sprintf("convs.%d.bias", l)]
		if len(w.Shape) != 2 || w.Shape[0] != H*C || w.Shape[1] != in || len(as.Data) != H*C || len(ad.Data) != H*C {
			t.Fatalf("layer %d: lin.weight %v, att_src %v, att_dst %v for %d heads of %d over %d inputs", l, w.Shape, as.Shape, ad.Shape, H, C, in)
		}
		z := make([]float64, n*H*C) // x·lin.weightᵀ, viewed [n, H, C]
		for v := 0; v < n; v++ {
			for k := 0; k < H*C; k++ {
				var s float64
				for i := 0; i < in; i++ {
					s += x[v*in+i] * float64(w.Data[k*in+i])
				}
				z[v*H*C+k] = s
			}
		}
		es, ed := make([]float64, n*H), make([]float64, n*H)
		for v := 0; v < n; v++ {
			for h := 0; h < H; h++ {
				for f := 0; f < C; f++ {
					es[v*H+h] += z[v*H*C+h*C+f] * float64(as.Data[h*C+f])
					ed[v*H+h] += z[v*H*C+h*C+f] * float64(ad.Data[h*C+f])
				}
			}
		}
		width := H * C
		if last {
			width = C
		}
		y := make([]float64, n*width)
		for v := 0; v < n; v++ {
			srcs := []int64{int64(v)} // the self loop GATConv adds
			for _, j := range indices[indptr[v]:indptr[v+1]] {
				if j != int64(v) { // and the ones it removes
					srcs = append(srcs, j)
				}
			}
			for h := 0; h < H; h++ {
				score := make([]float64, len(srcs))
				top := math.Inf(-1)
				for k, j := range srcs {
					s := es[int(j)*H+h] + ed[v*H+h]
					if s < 0 {
						s *= 0.2
					}
					score[k], top = s, max(top, s)
				}
				var sum float64
				for k := range score {
					score[k] = math.Exp(score[k] - top)
					sum += score[k]
				}
				for k, j := range srcs {
					for f := 0; f < C; f++ {
						a := score[k] / sum * z[int(j)*H*C+h*C+f]
						if last {
							y[v*width+f] += a / float64(H)
						} else {
							y[v*width+h*C+f] += a
						}
					}
				}
			}
			for k := 0; k < width; k++ {
				y[v*width+k] += float64(b.Data[k])
				if !last {
					y[v*width+k] = max(y[v*width+k], 0)
				}
			}
		}
		x, in = y, width
	}
	got, shape, err := npy.ReadFile(lg)
	if err != nil {
		t.Fatal(err)
	}
	logits := got.([]float32)
	if len(shape) != 2 || int(shape[0]) != n || int(shape[1]) != classes {
		t.Fatalf("logits %v, want [%d %d]", shape, n, classes)
	}
	worst, err := logitsClose(logits, x, gatLogitsBound)
	if err != nil {
		t.Fatalf("fanout's logits against GATConv's: %v", err)
	}
	t.Logf("%d vertices, %d classes: measured relative error %.3g at most", n, classes, worst)
}

// gatLogitsBound holds fanout's float32 logits to the float64 recomputation
// above, relative to 1 + |logit|: measured 5.5e-7 (fanout eval on the
// CPU, as in docs/perf.md's GAT section): 5e-6 is 9x.
const gatLogitsBound = 5e-6

// logitsClose holds every logit of got within bound·(1 + |want|) of want's
// (a NaN or an infinity failing) and returns the largest of |got - want| /
// (1 + |want|), with an error naming the first logit that misses.
func logitsClose(got []float32, want []float64, bound float64) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%d logits, want %d", len(got), len(want))
	}
	var worst float64
	for i, v := range got {
		scale := 1 + math.Abs(want[i])
		if err := tolerance.Within(float64(v), want[i], scale, bound); err != nil {
			return 0, fmt.Errorf("logit %d: %w", i, err)
		}
		worst = max(worst, math.Abs(float64(v)-want[i])/scale)
	}
	return worst, nil
}

// TestLogitsCloseRejectsNaN: a NaN or an infinity on either side fails
// logitsClose; equal logits pass.
func TestLogitsCloseRejectsNaN(t *testing.T) {
	got, want := []float32{0.5, -2, 3}, []float64{0.5, -2, 3}
	if _, err := logitsClose(got, want, gatLogitsBound); err != nil {
		t.Fatalf("equal logits: %v", err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for i := range got {
			g, w := slices.Clone(got), slices.Clone(want)
			g[i] = float32(v)
			if _, err := logitsClose(g, want, gatLogitsBound); err == nil {
				t.Errorf("%v at fanout's logit %d: no error", v, i)
			}
			w[i] = v
			if _, err := logitsClose(got, w, gatLogitsBound); err == nil {
				t.Errorf("%v at GATConv's logit %d: no error", v, i)
			}
		}
	}
}

package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/nn"
)

// typedModel is a real typed model's parameters (papers cite papers,
// authors write papers and are written by them; authors learn rows of 3)
// and an author table, read from a CPU model.
func typedModel(t *testing.T, kind string, bases int) Model {
	t.Helper()
	cfg := nn.Config{Kind: kind, InDim: 3, Hidden: 4, Classes: 2, Layers: 2, Bases: bases,
		Types:     []nn.TypeSpec{{Name: "paper", InDim: 3}, {Name: "author", InDim: 3}},
		Relations: []nn.RelSpec{{Name: "paper__cites__paper", Src: 0, Dst: 0}, {Name: "author__writes__paper", Src: 1, Dst: 0}, {Name: "paper__rev_writes__author", Src: 0, Dst: 1}}}
	out := modelOf(t, cfg)
	out.Params = append(out.Params, Param{Name: "embed.author", Shape: []int{5, 3}, Data: make([]float32, 15)})
	return out
}

// byName is the tensors keyed by their names.
func byName(ts []Tensor) map[string]Tensor {
	m := map[string]Tensor{}
	for _, x := range ts {
		m[x.Name] = x
	}
	return m
}

// modelOf is a CPU model of cfg (seed 5) as the exports read it.
func modelOf(t *testing.T, cfg nn.Config) Model {
	t.Helper()
	be := cpu.New(1)
	m, err := nn.NewModel(be, cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	out := Model{Config: cfg}
	for _, p := range m.Params() {
		v := make([]float32, p.Size())
		be.Read(v, p.W, 0)
		out.Params = append(out.Params, Param{Name: p.Name, Shape: p.Shape, Data: v})
	}
	return out
}

// TestPyGTypedNorm: a typed model's normalisations map to to_hetero's
// copies of BasicGNN's norms, per type, with the metadata's norm.
func TestPyGTypedNorm(t *testing.T) {
	for _, norm := range []string{"batch", "layer"} {
		cfg := typedModel(t, "rsage", 0).Config
		cfg.Norm = norm
		be := cpu.New(1)
		m, err := nn.NewModel(be, cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		c := Model{Config: cfg, Steps: 7}
		for _, p := range m.Params() {
			v := make([]float32, p.Size())
			be.Read(v, p.W, 0)
			c.Params = append(c.Params, Param{Name: p.Name, Shape: p.Shape, Data: v})
		}
		m.Free()
		ts, meta, err := PyG(c)
		if err != nil {
			t.Fatalf("%s: %v", norm, err)
		}
		names := byName(ts)
		want := []string{"gnn.norms.0.author.weight", "gnn.norms.0.paper.bias"}
		if norm == "batch" {
			want = []string{"gnn.norms.0.author.module.weight", "gnn.norms.0.paper.module.running_var", "gnn.norms.0.paper.module.num_batches_tracked"}
		}
		for _, w := range want {
			if _, ok := names[w]; !ok {
				t.Errorf("%s: no tensor %s", norm, w)
			}
		}
		if w, ok := names["gnn.norms.0.paper.module.running_var"]; ok && (len(w.Data) != 4 || w.Data[0] != 1) {
			t.Errorf("running_var %v, want four ones", w.Data)
		}
		if meta["norm"] == "" {
			t.Errorf("%s: metadata without norm: %v", norm, meta)
		}
	}
}

// TestPyGTypedJK: jumping knowledge's head maps to to_hetero's lin per
// type, the target's the head (transposed), the others' zeros.
func TestPyGTypedJK(t *testing.T) {
	cfg := typedModel(t, "rgcn", 0).Config
	cfg.JK = "cat"
	be := cpu.New(1)
	m, err := nn.NewModel(be, cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	c := Model{Config: cfg}
	var head Param
	for _, p := range m.Params() {
		v := make([]float32, p.Size())
		be.Read(v, p.W, 0)
		c.Params = append(c.Params, Param{Name: p.Name, Shape: p.Shape, Data: v})
		if p.Name == "jk.w" {
			head = c.Params[len(c.Params)-1]
		}
	}
	m.Free()
	ts, meta, err := PyG(c)
	if err != nil {
		t.Fatal(err)
	}
	got := byName(ts)
	w, other := got["gnn.lin.paper.weight"], got["gnn.lin.author.weight"]
	if len(head.Shape) != 2 || head.Shape[0] != 8 || len(w.Shape) != 2 || w.Shape[0] != 2 || w.Shape[1] != 8 {
		t.Fatalf("head %v, paper's lin %v: want [8, 2] and [2, 8] (two layers of 4, cat)", head.Shape, w.Shape)
	}
	if w.Data[1*8+3] != head.Data[3*2+1] {
		t.Errorf("paper's lin is not the head transposed")
	}
	for _, v := range other.Data {
		if v != 0 {
			t.Fatalf("author's lin holds %g, want zeros", v)
		}
	}
	if len(other.Data) != len(w.Data) || meta["jk"] != "cat" {
		t.Errorf("author's lin %v, metadata jk %q", other.Shape, meta["jk"])
	}
}

// TestPyGTyped: a typed model's export names every parameter as the PyG
// module does (to_hetero's edge-type keys under gnn, embeddings under
// embed), transposes weights, makes RGCN's relation weights from its
// bases, and describes the schema in its metadata.
func TestPyGTyped(t *testing.T) {
	for _, c := range []struct {
		kind  string
		bases int
		want  []string
	}{
		{"rsage", 0, []string{"gnn.convs.0.author__writes__paper.lin_l.weight", "gnn.convs.1.paper__rev_writes__author.lin_r.weight", "gnn.convs.0.paper__cites__paper.lin_l.bias"}},
		{"rgcn", 0, []string{"gnn.convs.1.author__writes__paper.lin_l.weight", "gnn.lins.0.author.weight", "gnn.lins.1.paper.bias"}},
		{"rgcn", 2, []string{"gnn.convs.0.paper__cites__paper.lin_l.weight", "gnn.lins.1.author.bias"}},
	} {
		m := typedModel(t, c.kind, c.bases)
		ts, meta, err := PyG(m)
		if err != nil {
			t.Fatalf("%s bases %d: %v", c.kind, c.bases, err)
		}
		got := byName(ts)
		for _, w := range append(c.want, "embed.author.weight") {
			if _, ok := got[w]; !ok {
				t.Errorf("%s bases %d: no tensor %s", c.kind, c.bases, w)
			}
		}
		var edges [][3]string
		if err := json.Unmarshal([]byte(meta["edge_types"]), &edges); err != nil || len(edges) != 3 || edges[1] != [3]string{"author", "writes", "paper"} {
			t.Errorf("%s: edge_types %q (%v)", c.kind, meta["edge_types"], err)
		}
		if meta["model"] != c.kind || meta["target"] != "paper" || meta["embed"] != `{"author":[5,3]}` {
			t.Errorf("%s: metadata %v", c.kind, meta)
		}
		params := map[string]Param{}
		for _, p := range m.Params {
			params[p.Name] = p
		}
		// One transposed weight: PyG's [out, in] is fanout's [in, out].
		want := params["layer1.author__writes__paper.w_neigh"]
		name := "gnn.convs.1.author__writes__paper.lin_l.weight"
		if c.kind == "rgcn" && c.bases == 0 {
			want = params["layer1.author__writes__paper.w"]
		}
		if c.bases > 0 {
			// W_r = Σ_b comp[r, b]·V_b, relation 1 at layer 1 ([4, 2]).
			bases, comp := params["layer1.bases"], params["layer1.comp"]
			w := make([]float32, 8)
			for b := range 2 {
				for i := range w {
					w[i] += comp.Data[1*2+b] * bases.Data[b*8+i]
				}
			}
			want = Param{Shape: []int{4, 2}, Data: w}
		}
		g := got[name]
		if len(g.Shape) != 2 || g.Shape[0] != want.Shape[1] || g.Shape[1] != want.Shape[0] {
			t.Fatalf("%s bases %d: %s shape %v, fanout's %v", c.kind, c.bases, name, g.Shape, want.Shape)
		}
		for i := range want.Shape[0] {
			for j := range want.Shape[1] {
				if d := g.Data[j*want.Shape[0]+i] - want.Data[i*want.Shape[1]+j]; d > 1e-6 || d < -1e-6 {
					t.Fatalf("%s bases %d: %s[%d][%d] = %g, want %g", c.kind, c.bases, name, j, i, g.Data[j*want.Shape[0]+i], want.Data[i*want.Shape[1]+j])
				}
			}
		}
		for n := range got {
			if !strings.HasPrefix(n, "gnn.") && !strings.HasPrefix(n, "embed.") {
				t.Errorf("%s: tensor %s outside gnn and embed", c.kind, n)
			}
		}
	}
	// A parameter the mapping does not know is an error, not dropped.
	m := typedModel(t, "rsage", 0)
	m.Params = append(m.Params, Param{Name: "layer0.paper__cites__paper.extra", Shape: []int{1}, Data: []float32{0}})
	if _, _, err := PyG(m); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("an unknown parameter: %v", err)
	}
}

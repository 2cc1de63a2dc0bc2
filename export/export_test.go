package export

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/nn"
)

func sampleCheckpoint(kind string) *Model {
	c := &Model{Config: nn.Config{Kind: kind, InDim: 3, Hidden: 4, Classes: 2, Layers: 2}}
	add := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(len(c.Params)*100 + i)
		}
		c.Params = append(c.Params, Param{Name: name, Shape: shape, Data: v})
	}
	switch kind {
	case "gin":
		add("layer0.w1", 3, 4)
		add("layer0.b1", 4)
		add("layer0.w2", 4, 4)
		add("layer0.bias", 4)
		add("layer1.w1", 4, 2)
		add("layer1.b1", 2)
		add("layer1.w2", 2, 2)
		add("layer1.bias", 2)
	case "sage":
		add("layer0.w_self", 3, 4)
		add("layer0.w_neigh", 3, 4)
		add("layer0.bias", 4)
		add("layer1.w_self", 4, 2)
		add("layer1.w_neigh", 4, 2)
		add("layer1.bias", 2)
	case "gat":
		// Hidden 4 = 2 heads of 2; the last layer averages 3 heads of 2.
		c.Config.Heads, c.Config.OutHeads = 2, 3
		add("layer0.w", 3, 4)
		add("layer0.att_src", 2, 2)
		add("layer0.att_dst", 2, 2)
		add("layer0.bias", 4)
		add("layer1.w", 4, 6)
		add("layer1.att_src", 3, 2)
		add("layer1.att_dst", 3, 2)
		add("layer1.bias", 2)
	default:
		add("layer0.w", 3, 4)
		add("layer0.bias", 4)
		add("layer1.w", 4, 2)
		add("layer1.bias", 2)
	}
	return c
}

// TestPyGRoundTrip: the file holds PyG's names, torch's [out, in] weights
// (the transpose of fanout's [in, out]), the biases as they are, and the
// model's description; reading it back gives the same values.
func TestPyGRoundTrip(t *testing.T) {
	for kind, want := range map[string][]string{
		"sage": {"convs.0.lin_l.bias", "convs.0.lin_l.weight", "convs.0.lin_r.weight", "convs.1.lin_l.bias", "convs.1.lin_l.weight", "convs.1.lin_r.weight"},
		"gcn":  {"convs.0.bias", "convs.0.lin.weight", "convs.1.bias", "convs.1.lin.weight"},
		"gin":  {"convs.0.eps", "convs.0.nn.lins.0.bias", "convs.0.nn.lins.0.weight", "convs.0.nn.lins.1.bias", "convs.0.nn.lins.1.weight", "convs.1.eps", "convs.1.nn.lins.0.bias", "convs.1.nn.lins.0.weight", "convs.1.nn.lins.1.bias", "convs.1.nn.lins.1.weight"},
		"gat":  {"convs.0.att_dst", "convs.0.att_src", "convs.0.bias", "convs.0.lin.weight", "convs.1.att_dst", "convs.1.att_src", "convs.1.bias", "convs.1.lin.weight"},
	} {
		c := sampleCheckpoint(kind)
		ts, meta, err := PyG(*c)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "m.safetensors")
		if err := WriteSafetensors(path, ts, meta); err != nil {
			t.Fatal(err)
		}
		got, gotMeta, err := ReadSafetensors(path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for n := range got {
			names = append(names, n)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Fatalf("%s: tensors %v, want %v", kind, names, want)
		}
		if gotMeta["num_layers"] != "2" || !strings.HasSuffix(gotMeta["pyg_model"], map[string]string{"sage": "GraphSAGE", "gcn": "GCN", "gin": "GIN", "gat": "GAT"}[kind]) {
			t.Errorf("%s: metadata %v", kind, gotMeta)
		}
		// The first layer's weight: fanout's [3, 4] element (r, c) is torch's (c, r).
		src := c.Params[0].Data
		if kind == "sage" {
			src = c.Params[1].Data // w_neigh → lin_l
		}
		w := got[map[string]string{"sage": "convs.0.lin_l.weight", "gcn": "convs.0.lin.weight", "gin": "convs.0.nn.lins.0.weight", "gat": "convs.0.lin.weight"}[kind]]
		if !slices.Equal(w.Shape, []int{4, 3}) {
			t.Fatalf("%s: weight shape %v, want [4 3]", kind, w.Shape)
		}
		for r := 0; r < 3; r++ {
			for col := 0; col < 4; col++ {
				if w.Data[col*3+r] != src[r*4+col] {
					t.Fatalf("%s: weight (%d, %d) = %v, want %v", kind, col, r, w.Data[col*3+r], src[r*4+col])
				}
			}
		}
	}
}

func TestPyGUnknownModel(t *testing.T) {
	c := sampleCheckpoint("gcn")
	c.Config.Kind = "gatv2"
	if _, _, err := PyG(*c); err == nil || !strings.Contains(err.Error(), `no PyG mapping for model "gatv2"`) {
		t.Fatalf("err = %v", err)
	}
}

// FuzzReadSafetensors: any bytes give tensors or an error, never a panic.
func FuzzReadSafetensors(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.safetensors")
	ts, meta, _ := PyG(*sampleCheckpoint("gcn"))
	if err := WriteSafetensors(path, ts, meta); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f.safetensors")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ReadSafetensors(p)
	})
}

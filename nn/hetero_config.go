package nn

import "fmt"

// Model kinds of typed graphs (several vertex and edge types): a layer per
// relation, summed over the relations into each destination type.
const (
	// KindRSAGE is GraphSAGE per relation, summed over relations into each
	// destination type: PyTorch Geometric's to_hetero(GraphSAGE). Relation
	// r = (s, t) adds mean_r(x_s)·W_neigh^r + x_t·W_self^r + b^r to type t.
	KindRSAGE = "rsage"
	// KindRGCN is the relational GCN (Schlichtkrull et al.): relation r adds
	// mean_r(x_s)·W_r to its destination type t, which adds its own
	// x_t·W_root^t + b^t; with Bases B each W_r = Σ_b comp[r, b]·V_b.
	KindRGCN = "rgcn"
	// KindRGAT is the relational GAT of MLPerf Training's GNN benchmark:
	// per relation PyTorch Geometric's GATConv(add_self_loops=False),
	// summed over relations into each destination type (HeteroConv with
	// aggr="sum"); see rgat.go.
	KindRGAT = "rgat"
)

// TypeSpec is one vertex type as a typed model sees it: its name and the
// width of its input rows (its features, or its learned embedding).
type TypeSpec struct {
	Name  string
	InDim int
}

// RelSpec is one relation (edge type): messages flow from vertices of type
// Src to vertices of type Dst (indices into Config.Types).
type RelSpec struct {
	Name     string
	Src, Dst int
}

// CompactsSources reports whether the model projects each relation's own
// sources alone (TypedBatch.Compact) rather than every source of its
// source type: RGAT, whose relations' edges read a share of them (on
// igbh-sim 30% of the rows the bottom layer projected, 0.5% for paper to
// conference).
func (c Config) CompactsSources() bool { return c.Kind == KindRGAT }

// CompactCap is the capacity of relation r's own sources at layer lc
// (CompactsSources): at most its source type's, and its edges' (within
// one type beside the destinations, which come first).
func (c Config) CompactCap(lc LayerCaps, r int) int {
	rel, n := c.Relations[r], lc.Edges[r]
	if rel.Src == rel.Dst {
		n += lc.Types[rel.Dst].Dst
	}
	return min(lc.Types[rel.Src].Src, n)
}

// typed reports whether the kind is a typed graph's.
func typed(kind string) bool { return kind == KindRSAGE || kind == KindRGCN || kind == KindRGAT }

// Typed reports whether the model is a typed graph's (Types and Relations
// set).
func (c Config) Typed() bool { return typed(c.Kind) }

// validateTyped checks a typed model's schema: types with positive widths,
// relations between them, a target among them; every type that sends a
// relation's messages receives some itself (its rows at every layer above
// the bottom are some layer's outputs); the options the typed layers do not
// have are off.
func (c Config) validateTyped() error {
	T, R := len(c.Types), len(c.Relations)
	switch {
	case T == 0 || R == 0:
		return fmt.Errorf("nn: config %s: a typed model needs vertex types and relations (%d types, %d relations)", c.Kind, T, R)
	case c.Target < 0 || c.Target >= T:
		return fmt.Errorf("nn: config Target %d: want one of the %d types", c.Target, T)
	case c.BF16Bottom || c.BF16Activations || c.InputDropout != 0 || c.LearnEps || c.GINFanouts != "":
		return fmt.Errorf("nn: config %s: bfloat16 products or activations, input dropout and GIN's options are the one-type models'", c.Kind)
	case c.JK != "" && c.JK != JKNone && c.JK != JKLast && c.JK != JKCat && c.JK != JKMax:
		return fmt.Errorf("nn: config JK %q: want none, last, cat or max", c.JK)
	case c.Norm != "" && c.Norm != NormNone && c.Norm != NormBatch && c.Norm != NormLayer:
		return fmt.Errorf("nn: config Norm %q: want none, batch or layer", c.Norm)
	case c.Bases < 0 || (c.Bases > 0 && c.Kind != KindRGCN):
		return fmt.Errorf("nn: config Bases %d: basis decomposition is rgcn's, at least 1 (0: none)", c.Bases)
	}
	in := make([]bool, T)
	for i, t := range c.Types {
		if t.InDim <= 0 {
			return fmt.Errorf("nn: config Types[%d] (%s): input width %d, want positive", i, t.Name, t.InDim)
		}
	}
	for i, r := range c.Relations {
		if r.Src < 0 || r.Src >= T || r.Dst < 0 || r.Dst >= T {
			return fmt.Errorf("nn: config Relations[%d] (%s): types %d -> %d outside the %d types", i, r.Name, r.Src, r.Dst, T)
		}
		in[r.Dst] = true
	}
	for _, r := range c.Relations {
		if !in[r.Src] && c.Layers > 1 {
			return fmt.Errorf("nn: config: type %s sends relation %s's messages but receives none: its rows above the bottom layer would have no value (add the relations' reverses)", c.Types[r.Src].Name, r.Name)
		}
	}
	if !in[c.Target] {
		return fmt.Errorf("nn: config: the target type %s receives no relation's messages", c.Types[c.Target].Name)
	}
	if c.Bases > 0 {
		for _, t := range c.Types {
			if t.InDim != c.Types[0].InDim {
				return fmt.Errorf("nn: config Bases %d: the bases are shared by every relation, so every type's input width must be one (%s: %d, %s: %d)",
					c.Bases, c.Types[0].Name, c.Types[0].InDim, t.Name, t.InDim)
			}
		}
	}
	return nil
}

// typeDims returns type t's input and output widths at layer l.
func (c Config) typeDims(l, t int) (in, out int) {
	in, out = c.Hidden, c.Hidden
	if l == 0 {
		in = c.Types[t].InDim
	}
	if !c.hiddenOut(l) {
		out = c.Classes // the top layer's, unless jumping knowledge's head maps to the classes
	}
	return in, out
}

// RelsInto lists the relations whose destination type is t, in order.
func (c Config) RelsInto(t int) []int { return c.relsInto(t) }

// relsInto lists the relations whose destination type is t, in order.
func (c Config) relsInto(t int) []int {
	var out []int
	for r, rel := range c.Relations {
		if rel.Dst == t {
			out = append(out, r)
		}
	}
	return out
}

// TypeCaps is one vertex type's capacities at a layer: its destinations
// (the layer's output rows) and its sources (its input rows, destinations
// first).
type TypeCaps struct{ Dst, Src int }

// LayerCaps is a typed layer's envelope: per vertex type, and the sampled
// edges of each relation.
type LayerCaps struct {
	Types []TypeCaps
	Edges []int
}

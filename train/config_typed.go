package train

import (
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
)

// TypedModel reports whether the model is a typed graph's (rsage, rgcn,
// rgat).
func (c Config) TypedModel() bool {
	return c.Model == nn.KindRSAGE || c.Model == nn.KindRGCN || c.Model == nn.KindRGAT
}

// Attends reports whether the model has graph attention (gat, rgat), whose
// settings heads, out_heads and attn_dropout are.
func (c Config) Attends() bool { return c.Model == nn.KindGAT || c.Model == nn.KindRGAT }

// checkTyped checks the typed graphs' settings: their values, and that
// the typed models take none of the one-type models' options. Whether the
// dataset has types is CheckDataset's to check.
func (c Config) checkTyped() error {
	switch {
	case c.Bases < 0:
		return bad("bases", "%d, want at least 1 (0: a weight per relation)", c.Bases)
	case c.EmbedFeatureless < 0:
		return bad("embed_featureless", "%d, want at least 1 (0: the target type's feature width)", c.EmbedFeatureless)
	}
	for k, f := range c.RelationFanouts {
		if len(f) != c.Layers {
			return bad("relation_fanouts", "%s has %d values for %d layers; give one per layer", q(k), len(f), c.Layers)
		}
		for i, v := range f {
			if v < -1 {
				return bad("relation_fanouts", "%s: value %d at position %d; use -1 for all neighbours", q(k), v, i+1)
			}
		}
	}
	if !c.TypedModel() {
		return nil // a typed dataset's default model becomes rsage; CheckDataset refuses the rest
	}
	switch {
	case c.Bases > 0 && c.Model != nn.KindRGCN:
		return bad("bases", "%d, but basis decomposition is rgcn's (model %s)", c.Bases, c.Model)
	case c.Activations == "bfloat16" || c.BottomProducts == "bfloat16":
		return bad("activations", "bfloat16 activations and bottom products are the one-type models' (model %s)", c.Model)
	case c.InDropout != 0:
		return bad("input_dropout", "%g, but the typed models have no input dropout (model %s)", c.InDropout, c.Model)
	case c.FullEval:
		return bad("full_eval", "layer-wise inference is the one-type models' (model %s); typed models evaluate sampled", c.Model)
	case c.TaskName() != TaskNode:
		return bad("task", "%s: typed graphs learn node classification (model %s)", q(c.Task), c.Model)
	}
	return nil
}

// CheckDataset checks that the model fits the dataset: typed models need
// a typed dataset and the other way round; every relation_fanouts key
// names one relation.
func (c Config) CheckDataset(ds *dataset.Dataset) error {
	switch {
	case ds.Typed() && !c.TypedModel():
		return bad("model", "%s is a model of one vertex type, and %s has %d (want rsage, rgcn or rgat)", c.Model, ds.Name, len(ds.Types))
	case !ds.Typed() && c.TypedModel():
		return bad("model", "%s is a typed graphs' model, and %s has one vertex type (want sage, gcn, gin or gat)", c.Model, ds.Name)
	}
	if !ds.Typed() {
		switch {
		case c.Bases != 0:
			return bad("bases", "%d, but basis decomposition is rgcn's, for typed graphs (%s has one vertex type)", c.Bases, ds.Name)
		case c.EmbedFeatureless != 0:
			return bad("embed_featureless", "%d, but %s has one vertex type, with features", c.EmbedFeatureless, ds.Name)
		case len(c.RelationFanouts) > 0:
			return bad("relation_fanouts", "set, but %s has one relation (typed graphs have several)", ds.Name)
		}
		return nil
	}
	if _, err := c.TypedFanouts(ds); err != nil {
		return err
	}
	if c.Bases > 0 {
		dims := map[int]bool{}
		for _, vt := range ds.Types {
			d := vt.FeatDim
			if d == 0 {
				d = EmbedDim(ds, c.EmbedFeatureless)
			}
			dims[d] = true
		}
		if len(dims) > 1 {
			return bad("bases", "%d, but %s's types have input rows of %d widths (bases share one; set --embed-featureless to the features' width)", c.Bases, ds.Name, len(dims))
		}
	}
	return nil
}

// TypedFanouts are the fanouts per hop (from the seeds) and relation of
// ds: Fanouts, or a relation's own from RelationFanouts, keyed by its name
// or by "src:name:dst".
func (c Config) TypedFanouts(ds *dataset.Dataset) ([][]int, error) {
	out := make([][]int, c.Layers)
	for h := range out {
		out[h] = make([]int, len(ds.Relations))
		for r := range out[h] {
			out[h][r] = c.Fanouts[h]
		}
	}
	used := map[string]bool{}
	for r, rel := range ds.Relations {
		full := ds.Types[rel.Src].Name + ":" + rel.Name + ":" + ds.Types[rel.Dst].Name
		for _, key := range []string{rel.Name, full} {
			if f, ok := c.RelationFanouts[key]; ok {
				used[key] = true
				for h := range out {
					out[h][r] = f[h]
				}
			}
		}
	}
	for k := range c.RelationFanouts {
		if !used[k] {
			var names []string
			for _, rel := range ds.Relations {
				names = append(names, rel.Name)
			}
			return nil, bad("relation_fanouts", "%s names no relation of %s (relations: %s; or src:name:dst)", q(k), ds.Name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// TypedModelConfig is the nn configuration of a typed model for ds with
// the types' input widths.
func (c Config) TypedModelConfig(ds *dataset.Dataset, inDims []int) nn.Config {
	mc := c.ModelConfig(inDims[ds.Target], ds.NumClasses)
	mc.InputDropout, mc.Target, mc.Bases = 0, ds.Target, c.Bases
	for t, vt := range ds.Types {
		mc.Types = append(mc.Types, nn.TypeSpec{Name: vt.Name, InDim: inDims[t]})
	}
	for _, rel := range ds.Relations {
		// PyTorch Geometric's key of an edge type: src__rel__dst.
		name := ds.Types[rel.Src].Name + "__" + rel.Name + "__" + ds.Types[rel.Dst].Name
		mc.Relations = append(mc.Relations, nn.RelSpec{Name: name, Src: rel.Src, Dst: rel.Dst})
	}
	return mc
}

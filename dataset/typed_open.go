package dataset

import (
	"fmt"
	"path/filepath"

	"github.com/fanout-gnn/fanout/graph"
)

// openTyped opens the typed dataset in dir: its manifest, each type's
// feature table (types/<type>/feat.npy), each relation's graph
// (relations/<src>.<rel>.<dst>/indptr.npy and indices.npy), the target's
// labels and splits, all memory-mapped and checked against the manifest,
// then validated. The types' original ids are read on demand
// (ReadTypeIDs). opt.FeaturesOnDisk leaves the feature tables in their
// files (VertexType.FeatureFile), checked but not read.
func openTyped(dir string, opt OpenOptions) (_ *Dataset, err error) {
	m, err := ReadTypedManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	d := &Dataset{Name: m.Name, Source: m.Source, Preprocessing: m.Preprocessing, NumClasses: m.NumClasses,
		Target: m.typeIndex(m.Target)}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	l := loader{dir: dir, d: d}
	for _, e := range m.Types {
		t := VertexType{Name: e.Name, Count: e.Count, FeatDim: e.FeatDim, idsFile: e.NodeIDs}
		if e.FeatDim > 0 {
			file, says := filepath.Join(TypeDir(e.Name), FeatFile), fmt.Sprintf("type %s has count = %d, feat_dim = %d", e.Name, e.Count, e.FeatDim)
			if opt.FeaturesOnDisk {
				t.FeatureFile, err = openFeatureFile(l, file, e.Count, e.FeatDim, m.FeatureDType, says)
			} else {
				t.Features, t.FeaturesBF16, err = loadTable(l, file, e.Count, e.FeatDim, m.FeatureDType, says)
			}
			if err != nil {
				return nil, err
			}
		}
		d.Types = append(d.Types, t)
	}
	d.FeatDim = d.Types[d.Target].FeatDim
	for _, e := range m.Relations {
		r := Relation{Name: e.Name, Src: m.typeIndex(e.Src), Dst: m.typeIndex(e.Dst)}
		if r.Graph, err = loadRelation(l, e, d.Types[r.Dst].Count); err != nil {
			return nil, err
		}
		d.Relations = append(d.Relations, r)
	}
	target := d.Types[d.Target]
	if err = loadTarget(l, target.Count, fmt.Sprintf("the count of the target %s", target.Name), [3]int64{m.NumTrain, m.NumValid, m.NumTest}); err != nil {
		return nil, err
	}
	if err = l.validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// loadRelation maps a relation's graph of rows destination vertices.
func loadRelation(l loader, e RelationEntry, rows int64) (g *graph.CSR, err error) {
	sub := RelationDir(e.Src, e.Name, e.Dst)
	g = &graph.CSR{NumNodes: rows}
	if g.Indptr, err = loadInt[int64](l, filepath.Join(sub, IndptrFile), rows+1, fmt.Sprintf("the count of %s, plus one,", e.Dst)); err != nil {
		return nil, err
	}
	field := fmt.Sprintf("num_edges of (%s, %s, %s)", e.Src, e.Name, e.Dst)
	if g.Indices, err = loadInt[int32](l, filepath.Join(sub, IndicesFile), e.NumEdges, field); err != nil {
		return nil, err
	}
	return g, nil
}

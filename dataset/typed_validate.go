package dataset

import (
	"path/filepath"

	"github.com/fanout-gnn/fanout/dtype"

	"github.com/fanout-gnn/fanout/graph"
)

// validateTyped checks a typed dataset: no graph or features of one type
// (Graph, Features, FeaturesBF16, IDs, Link and Symmetric unset); every
// type named, with 1 to MaxTypeVertices vertices, a feature table of
// Count*FeatDim finite values (none where FeatDim is 0), every table of
// one dtype, ids of Count vertices where set; every relation between two
// listed types, named once as (src, name, dst), its graph of
// Types[Dst].Count rows whose indices are int32 ids in [0,
// Types[Src].Count), each row strictly increasing (sorted, without
// repeats); FeatDim the target's; labels and splits of the target's
// vertices as Validate checks a dataset's of one type; and the manifest
// that describes it one ParseTypedManifest accepts. Errors name the file
// inside the dataset's directory.
func (d *Dataset) validateTyped() error {
	switch {
	case d.Graph != nil:
		return fileErr(ManifestFile, "a typed dataset has relations, not one graph, but Graph is set")
	case d.Features != nil || d.FeaturesBF16 != nil:
		return fileErr(FeatFile, "a typed dataset holds features per type, but the dataset's features are set")
	case d.IDs != nil:
		return fileErr(IDsFile, "a typed dataset holds ids per type, but the dataset's ids are set")
	case d.Link != nil:
		return fileErr(ManifestFile, "a typed dataset has no link-prediction task yet")
	case d.Symmetric:
		return fileErr(ManifestFile, "symmetric describes a graph of one type; a typed dataset's relations are not one graph")
	case d.Target < 0 || d.Target >= len(d.Types):
		return fileErr(ManifestFile, "target is type %d of %d", d.Target, len(d.Types))
	case d.FeatDim != d.Types[d.Target].FeatDim:
		return fileErr(ManifestFile, "feat_dim is %d, but the target %s has %d", d.FeatDim, d.Types[d.Target].Name, d.Types[d.Target].FeatDim)
	case d.NumClasses < 1:
		return fileErr(ManifestFile, "num_classes is %d, want >= 1", d.NumClasses)
	}
	if err := typedManifestOf(d).check(); err != nil {
		return &FileError{File: ManifestFile, Err: err}
	}
	if err := d.validateTypes(); err != nil {
		return err
	}
	for _, r := range d.Relations {
		if err := d.validateRelation(r); err != nil {
			return err
		}
	}
	target := d.Types[d.Target]
	return d.validateLabels(target.Count, target.Name+"'s count", func() error { return nil })
}

// validateTypes checks each type's features and ids, and that the
// features are of one dtype.
func (d *Dataset) validateTypes() error {
	bf16 := -1
	for i, t := range d.Types {
		dir := TypeDir(t.Name)
		file := filepath.Join(dir, FeatFile)
		if err := validateTypeTable(t, file); err != nil {
			return err
		}
		if t.heldAs(dtype.BF16) {
			bf16 = i
		}
		if err := checkIDs(t.IDs, t.Count, t.Name+"'s count", dir); err != nil {
			return err
		}
	}
	if bf16 < 0 {
		return nil
	}
	for _, t := range d.Types {
		if t.heldAs(dtype.F32) {
			return fileErr(filepath.Join(TypeDir(t.Name), FeatFile), "float32 features, but type %s's are bfloat16: a dataset's tables have one dtype",
				d.Types[bf16].Name)
		}
	}
	return nil
}

// heldAs reports whether the type's features are held as dt: in memory
// (Features for F32, FeaturesBF16 for BF16) or in a file of dt.
func (t VertexType) heldAs(dt dtype.DType) bool {
	if f := t.FeatureFile; f != nil && f.DType == dt {
		return true
	}
	return dt == dtype.F32 && t.Features != nil || dt == dtype.BF16 && t.FeaturesBF16 != nil
}

// validateTypeTable checks one type's features (file names them): none
// where FeatDim is 0; a table left on disk (FeatureFile) of [Count,
// FeatDim] rows, its values not read; else a table as validateTable
// checks it.
func validateTypeTable(t VertexType, file string) error {
	f := t.FeatureFile
	switch {
	case t.FeatDim == 0:
		if t.Features != nil || t.FeaturesBF16 != nil || f != nil {
			return fileErr(file, "type %s has feat_dim 0 but a feature table", t.Name)
		}
		return nil
	case f != nil && t.Features == nil && t.FeaturesBF16 == nil:
		if f.Rows != t.Count || f.Dim != t.FeatDim {
			return fileErr(file, "[%d, %d] on disk, want type %s's [count, feat_dim] = [%d, %d]", f.Rows, f.Dim, t.Name, t.Count, t.FeatDim)
		}
		return nil
	}
	return validateTable(file, t.Count, t.FeatDim, t.Features, t.FeaturesBF16, t.Name+"'s count*feat_dim")
}

// validateRelation checks one relation's graph: Types[Dst].Count rows of
// Types[Src].Count vertices' ids, each row strictly increasing.
func (d *Dataset) validateRelation(r Relation) error {
	src, dst := d.Types[r.Src], d.Types[r.Dst]
	dir := RelationDir(src.Name, r.Name, dst.Name)
	ptrFile, idxFile := filepath.Join(dir, IndptrFile), filepath.Join(dir, IndicesFile)
	g := r.Graph
	if g == nil {
		return fileErr(idxFile, "relation %s has no graph", d.RelationName(r))
	}
	if g.NumNodes != dst.Count {
		return fileErr(ptrFile, "%d rows, want one per vertex of the destination %s (%d)", g.NumNodes, dst.Name, dst.Count)
	}
	if g.Indices == nil && g.NumEdges() > 0 {
		return fileErr(idxFile, "int64 indices: a relation's indices are int32 (its types hold fewer than 2^31 vertices)")
	}
	if err := validateCSR(g, dst.Name+"'s count", src.Count, ptrFile, idxFile); err != nil {
		return err
	}
	return checkSortedRows(g, idxFile)
}

// checkSortedRows reports the first row of g whose indices do not
// strictly increase: rows are sorted, without repeats.
func checkSortedRows(g *graph.CSR, idxFile string) error {
	return firstError(g.NumNodes, func(lo, hi int64) error {
		for v := lo; v < hi; v++ {
			row := g.Indices[g.Indptr[v]:g.Indptr[v+1]]
			for i := 1; i < len(row); i++ {
				if row[i] <= row[i-1] {
					what := "repeats"
					if row[i] < row[i-1] {
						what = "is not sorted:"
					}
					return fileErr(idxFile, "row %d %s %d after %d (entries %d and %d); a relation's rows are sorted, without repeats",
						v, what, row[i], row[i-1], g.Indptr[v]+int64(i)-1, g.Indptr[v]+int64(i))
				}
			}
		}
		return nil
	})
}

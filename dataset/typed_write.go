package dataset

import (
	"context"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// writeTypedFiles writes a typed dataset's arrays (TypedFormatVersion's
// layout) and its manifest into dir, synced.
func writeTypedFiles(ctx context.Context, dir string, d *Dataset) error {
	write := func(file string, data any, shape ...int64) error {
		return writeArray(ctx, filepath.Join(dir, file), data, shape)
	}
	var dirs []string
	for _, t := range d.Types {
		sub := TypeDir(t.Name)
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
		dirs = append(dirs, sub)
		if t.FeatDim > 0 {
			if err := write(filepath.Join(sub, FeatFile), t.FeatureTable(), t.Count, int64(t.FeatDim)); err != nil {
				return err
			}
		}
		if err := writeNodeIDs(filepath.Join(dir, sub), t.IDs); err != nil {
			return err
		}
	}
	for _, r := range d.Relations {
		sub := RelationDir(d.Types[r.Src].Name, r.Name, d.Types[r.Dst].Name)
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
		dirs = append(dirs, sub)
		g := r.Graph
		if err := write(filepath.Join(sub, IndptrFile), g.Indptr, g.NumNodes+1); err != nil {
			return err
		}
		if err := write(filepath.Join(sub, IndicesFile), g.Indices, g.NumEdges()); err != nil {
			return err
		}
	}
	if err := writeTargetFiles(write, d); err != nil {
		return err
	}
	if err := writeManifest(dir, typedManifestOf(d)); err != nil {
		return err
	}
	for _, sub := range append(dirs, TypesDir, RelationsDir) {
		if err := atomicfile.SyncDir(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	return atomicfile.SyncDir(dir)
}

// writeTargetFiles writes the labels and the three splits.
func writeTargetFiles(write func(file string, data any, shape ...int64) error, d *Dataset) error {
	for _, a := range []struct {
		file string
		data any
		n    int
	}{
		{LabelFile, d.Labels, len(d.Labels)},
		{TrainFile, d.Train, len(d.Train)},
		{ValidFile, d.Valid, len(d.Valid)},
		{TestFile, d.Test, len(d.Test)},
	} {
		if err := write(a.file, a.data, int64(a.n)); err != nil {
			return err
		}
	}
	return nil
}

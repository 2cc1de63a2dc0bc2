package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// Write stores d as a dataset directory at dir. The dataset is validated
// first; everything is written into a temporary sibling directory, synced,
// and renamed into place, so dir never holds a half-written dataset. An
// existing dir must be empty or hold a fanout dataset (a valid manifest and
// only dataset files); a dataset there is replaced: the old directory is
// renamed aside, the new one renamed in, and the old one removed.
func Write(dir string, d *Dataset) error {
	_, err := WriteContext(context.Background(), dir, d)
	return err
}

// WriteContext is Write that stops when ctx is done, removing what it had
// written and returning ctx's error. It first removes the temporary
// siblings of dir that an earlier write killed before its end left
// (".NAME.tmp-*", and ".NAME.old-*" beside a complete dir), unless a
// write still running holds them, and returns their names.
func WriteContext(ctx context.Context, dir string, d *Dataset) (stale []string, err error) {
	if d == nil {
		return nil, errors.New("dataset not written: nil dataset")
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("dataset not written to %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	existing, err := checkTarget(abs)
	if err != nil {
		return nil, err
	}
	parent, base := filepath.Split(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	if stale, err = removeStale(parent, base); err != nil {
		return stale, err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+tempSuffix)
	if err != nil {
		return stale, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	// Held while this write runs: a write beside it leaves tmp alone.
	held, err := lockDir(tmp)
	if err != nil {
		return stale, err
	}
	defer unlockDir(held)
	if err = writeFiles(ctx, tmp, d); err != nil {
		if ctx.Err() != nil {
			return stale, ctx.Err()
		}
		return stale, fmt.Errorf("writing %s: %w", dir, err)
	}
	if err = os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return stale, err
	}
	if err = ctx.Err(); err != nil {
		return stale, err
	}
	if err = replaceDir(abs, tmp, existing); err != nil {
		return stale, fmt.Errorf("writing %s: %w", dir, err)
	}
	return stale, atomicfile.SyncDir(parent)
}

// Suffixes of Write's temporary siblings of a dataset directory NAME:
// .NAME.tmp-* is being written, .NAME.old-* is the dataset it replaces.
const (
	tempSuffix = ".tmp-"
	oldSuffix  = ".old-"
)

// removeStale removes parent's temporary siblings of the dataset directory
// base that no running write holds (lockDir): the .tmp- directories, and
// the .old- ones where base itself is there (while it is not, an .old- one
// is the dataset a killed write was replacing, and stays). It returns their
// names.
func removeStale(parent, base string) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	_, err = os.Stat(filepath.Join(parent, base))
	complete := err == nil
	var removed []string
	for _, e := range entries {
		name := e.Name()
		tmp := strings.HasPrefix(name, "."+base+tempSuffix)
		if !e.IsDir() || !(tmp || (complete && strings.HasPrefix(name, "."+base+oldSuffix))) {
			continue
		}
		path := filepath.Join(parent, name)
		held, err := lockDir(path)
		if err != nil || held == nil {
			continue // a write holds it, or this system cannot tell
		}
		err = os.RemoveAll(path)
		unlockDir(held)
		if err != nil {
			return removed, fmt.Errorf("removing %s, which an interrupted write left: %w", path, err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// CheckTarget reports whether dir holds a fanout dataset, which a write
// there replaces, and fails where dir holds anything else (a write refuses
// it); an absent or empty dir holds none. Commands check it before work.
func CheckTarget(dir string) (holds bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	if _, err := checkTarget(abs); err != nil {
		return false, err
	}
	_, err = os.Stat(filepath.Join(abs, ManifestFile))
	return err == nil, nil
}

// checkTarget reports whether dir exists with content, and fails unless it
// is absent, empty or a fanout dataset.
func checkTarget(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", dir, err)
	}
	if len(entries) == 0 {
		return true, nil
	}
	for _, e := range entries {
		file := slices.Contains(files, e.Name()) && e.Type().IsRegular()
		typedDir := (e.Name() == TypesDir || e.Name() == RelationsDir) && e.IsDir()
		if !file && !typedDir {
			return false, fmt.Errorf("%s exists and is not a fanout dataset (it holds %s); refusing to replace it", dir, e.Name())
		}
	}
	if err := checkManifestFile(filepath.Join(dir, ManifestFile)); err != nil {
		return false, fmt.Errorf("%s exists and is not a valid fanout dataset (%w); refusing to replace it", dir, err)
	}
	return true, nil
}

// checkManifestFile reads and checks a manifest of either layout.
func checkManifestFile(path string) error {
	typed, err := IsTyped(path)
	if err != nil {
		return err
	}
	if typed {
		_, err = ReadTypedManifest(path)
	} else {
		_, err = ReadManifest(path)
	}
	return err
}

// replaceDir renames tmp to dir, moving an existing dir aside first and
// removing it afterwards. If the final rename fails the old dir is restored.
func replaceDir(dir, tmp string, existing bool) error {
	if !existing {
		return os.Rename(tmp, dir)
	}
	if err := os.Remove(dir); err == nil { // it was empty
		return os.Rename(tmp, dir)
	}
	old, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+oldSuffix)
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if rerr := os.Rename(old, dir); rerr != nil {
			return fmt.Errorf("%w (and restoring the old dataset from %s failed: %v)", err, old, rerr)
		}
		return err
	}
	return os.RemoveAll(old)
}

// writeFiles writes every array and the manifest into dir, synced.
func writeFiles(ctx context.Context, dir string, d *Dataset) error {
	if d.Typed() {
		return writeTypedFiles(ctx, dir, d)
	}
	g := d.Graph
	n := g.NumNodes
	var indices any = g.Indices
	if g.Wide() {
		indices = g.Indices64
	}
	arrays := []struct {
		file  string
		data  any
		shape []int64
	}{
		{IndptrFile, g.Indptr, []int64{n + 1}},
		{IndicesFile, indices, []int64{g.NumEdges()}},
		{FeatFile, d.FeatureTable(), []int64{n, int64(d.FeatDim)}},
		{LabelFile, d.Labels, []int64{n}},
		{TrainFile, d.Train, []int64{int64(len(d.Train))}},
		{ValidFile, d.Valid, []int64{int64(len(d.Valid))}},
		{TestFile, d.Test, []int64{int64(len(d.Test))}},
	}
	for _, a := range arrays {
		if err := writeArray(ctx, filepath.Join(dir, a.file), a.data, a.shape); err != nil {
			return err
		}
	}
	if err := writeLink(func(file string, data any, shape []int64) error {
		return writeArray(ctx, filepath.Join(dir, file), data, shape)
	}, d); err != nil {
		return err
	}
	if err := writeIDs(dir, d); err != nil {
		return err
	}
	if err := writeManifest(dir, manifestOf(d)); err != nil {
		return err
	}
	return atomicfile.SyncDir(dir)
}

// writeManifest writes the manifest m into dir, synced.
func writeManifest(dir string, m manifestText) error {
	text, err := m.marshal()
	if err != nil {
		return err
	}
	return writeSynced(filepath.Join(dir, ManifestFile), func(f *os.File) error {
		_, err := f.Write(text)
		return err
	})
}

// writeArray writes one .npy file and syncs it, stopping between chunks
// when ctx is done.
func writeArray(ctx context.Context, path string, data any, shape []int64) error {
	return writeSynced(path, func(f *os.File) error { return npy.Write(ctxWriter{ctx, f}, data, shape) })
}

// ctxWriter writes in chunks of at most 64 MiB and fails with ctx's error
// once ctx is done (a features file can be tens of gigabytes).
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if err := c.ctx.Err(); err != nil {
			return n, err
		}
		k, err := c.w.Write(b[:min(len(b), 64<<20)])
		n += k
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

// writeSynced creates path, fills it with fill, fsyncs and closes it.
func writeSynced(path string, fill func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

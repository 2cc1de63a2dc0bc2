// Package atomicfile writes files so that a reader sees the old content or
// the new, never a part of either: the bytes go to a temporary file beside
// the target (named TempPrefix followed by random characters), are synced
// to disk, and the file is renamed over the target; the directory is then
// synced so that the rename survives a crash. A failed write leaves the
// target untouched and removes its temporary file. A killed process can
// leave a temporary file behind: whoever owns the directory removes names
// that start with TempPrefix when nothing writes there (a run directory on
// open).
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// TempPrefix starts the name of every temporary file this package creates.
const TempPrefix = ".tmp-"

// Write writes data to path atomically. Errors name path.
func Write(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes to path atomically what fill writes to the writer it is
// handed (a temporary file beside path; fill must not keep it). An error
// from fill, or from syncing, closing or renaming, leaves path untouched.
// Errors name path.
func WriteWith(path string, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("%s: %w", path, err)
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir syncs a directory so that the entries created or renamed in it
// are durable. Windows cannot sync a directory handle; there it does
// nothing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

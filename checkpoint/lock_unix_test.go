//go:build unix && !aix

package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSamePath: a lock whose file was removed (and another made at its
// path) between its open and its lock is no longer the file at the path,
// so lockFile takes the lock anew on the file there.
func TestSamePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LockFile)
	touch(t, dir, LockFile)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !samePath(f, path) {
		t.Fatal("samePath: the file at its own path")
	}
	os.Remove(path)
	touch(t, dir, LockFile)
	if samePath(f, path) {
		t.Fatal("samePath: a removed file is still the file at its path")
	}
}

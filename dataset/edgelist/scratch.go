package edgelist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// scratchPrefix begins the name of every scratch directory ImportBounded
// makes: another import removes one that no running import holds.
const scratchPrefix = ".fanout-edges-"

// scratch is one import's directory of sorted runs and graph files, held
// (locked) while the import runs.
type scratch struct {
	dir  string
	lock *os.File // nil where the system cannot lock
}

// newScratch removes what killed imports left in parent and makes a
// scratch directory there; stale names what it removed.
func newScratch(parent string) (s *scratch, stale []string, err error) {
	if parent == "" {
		parent = os.TempDir()
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, nil, err
	}
	if stale, err = removeStale(parent); err != nil {
		return nil, stale, err
	}
	dir, err := os.MkdirTemp(parent, scratchPrefix+"*")
	if err != nil {
		return nil, stale, err
	}
	lock, _, err := tryLock(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, stale, err
	}
	return &scratch{dir: dir, lock: lock}, stale, nil
}

// remove deletes the directory and drops its lock.
func (s *scratch) remove() error {
	err := os.RemoveAll(s.dir)
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close())
		s.lock = nil
	}
	return err
}

// removeStale removes parent's scratch directories that no running import
// holds, returning their names.
func removeStale(parent string) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), scratchPrefix) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		lock, held, err := tryLock(path)
		if err != nil || held {
			continue
		}
		err = os.RemoveAll(path)
		lock.Close()
		if err != nil {
			return removed, fmt.Errorf("removing %s, which an interrupted import left: %w", path, err)
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

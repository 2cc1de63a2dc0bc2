package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// Files of a run directory.
const (
	BestCheckpoint = "best.ckpt"     // the best validation accuracy so far
	LastCheckpoint = "last.ckpt"     // resumable: written each epoch and on interruption
	MetricsFile    = "metrics.jsonl" // one line per epoch
	SummaryFile    = "summary.json"  // written when the run ends
	LockFile       = "lock"          // holds an advisory lock and its holder's pid while a run is open

	tempCheckpointPrefix = ".ckpt-"              // Save's temporary files
	tempFilePrefix       = atomicfile.TempPrefix // the temporary files of the run's other writes
)

// runFiles are the files that make a directory hold a run.
var runFiles = []string{LastCheckpoint, BestCheckpoint, MetricsFile, SummaryFile}

// RunMode says what opening a run directory may do with a run already there.
type RunMode int

const (
	NewRun    RunMode = iota // refuse a directory that already holds a run
	ResumeRun                // continue the run there; last.ckpt must exist
	ForceRun                 // delete the run there and start again
)

// RunDir is a run directory opened for one run: it holds the directory's
// lock until Close.
type RunDir struct {
	Path string
	// Removed lists the temporary files of an earlier, killed run that
	// opening the directory deleted.
	Removed []string
	lock    *os.File
	owned   bool // opened for a run (not a dry run): Close removes the lock file
}

// OpenRunDir creates dir if needed, takes its lock (an advisory lock on
// dir/lock, which the system releases if the process dies; the file names
// the holder's pid), deletes temporary checkpoint files a killed run left,
// and checks mode against what dir holds: NewRun refuses a directory that
// holds a run (last.ckpt, best.ckpt, metrics.jsonl or summary.json),
// ResumeRun needs last.ckpt, ForceRun deletes those files.
func OpenRunDir(dir string, mode RunMode) (*RunDir, error) {
	return openRunDir(dir, mode, false)
}

// CheckRunDir makes OpenRunDir's checks without changing anything: it
// creates nothing, deletes nothing and releases the lock at once. A command
// calls it before slow work (loading a dataset) to fail early.
func CheckRunDir(dir string, mode RunMode) error {
	r, err := openRunDir(dir, mode, true)
	if err != nil {
		return err
	}
	return r.Close()
}

func openRunDir(dir string, mode RunMode, dryRun bool) (_ *RunDir, err error) {
	r := &RunDir{Path: dir}
	if dryRun {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			if mode == ResumeRun {
				return nil, fmt.Errorf("--resume: run directory %s does not exist", dir)
			}
			return r, nil
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if r.lock, err = lockFile(filepath.Join(dir, LockFile), !dryRun); err != nil {
		return nil, err
	}
	r.owned = !dryRun
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	var held []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, tempCheckpointPrefix) || strings.HasPrefix(name, tempFilePrefix) {
			if !dryRun {
				if err := os.Remove(filepath.Join(dir, name)); err != nil {
					return nil, fmt.Errorf("run directory: removing a temporary file of an interrupted run: %w", err)
				}
				r.Removed = append(r.Removed, name)
			}
		}
	}
	for _, f := range runFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			held = append(held, f)
		}
	}
	switch mode {
	case NewRun:
		if len(held) > 0 && !beforeCheckpoint(dir) {
			return nil, fmt.Errorf("run directory %s already holds a run (%s): continue it with --resume or start over with --force",
				dir, strings.Join(held, ", "))
		}
		// What a run stopped before its first checkpoint left (nothing
		// to continue from) goes; the run starts again.
		if !dryRun {
			for _, f := range held {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					return nil, fmt.Errorf("run directory: removing what a run stopped before its first checkpoint left: %w", err)
				}
				r.Removed = append(r.Removed, f)
			}
		}
	case ResumeRun:
		if _, err := os.Stat(filepath.Join(dir, LastCheckpoint)); err != nil {
			return nil, fmt.Errorf("--resume: %s has no %s to continue from", dir, LastCheckpoint)
		}
	case ForceRun:
		if !dryRun {
			for _, f := range held {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					return nil, fmt.Errorf("--force: %w", err)
				}
			}
		}
	}
	return r, nil
}

// beforeCheckpoint reports whether what dir holds of a run is at most what
// a run stopped before its first checkpoint leaves: no last.ckpt and no
// summary.json, and in metrics.jsonl only lines of the first epoch (its
// validations within it and at its end) (with best.ckpt, perhaps, which a
// validation writes before last.ckpt). There is nothing to continue from,
// and nothing a new run would lose.
func beforeCheckpoint(dir string) bool {
	for _, f := range []string{LastCheckpoint, SummaryFile} {
		if _, err := os.Lstat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false
	}
	for line := range bytes.Lines(bytes.TrimSpace(b)) {
		var l struct {
			Epoch *int `json:"epoch"`
		}
		if json.Unmarshal(line, &l) != nil || l.Epoch == nil || *l.Epoch > 1 {
			return false
		}
	}
	return true
}

// StoppedBeforeCheckpoint reports whether a run was started in dir (it has
// the lock file) and stopped before its first checkpoint: it has no
// last.ckpt to resume from, and a new run there loses nothing. A command
// asked to resume such a run starts it again.
func StoppedBeforeCheckpoint(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, LockFile)); err != nil {
		return false
	}
	return beforeCheckpoint(dir)
}

// Close releases the lock. A run's Close removes the lock file too, so a
// finished run leaves none (a killed run's stays, and tells the next run
// that one stopped there); a dry run's leaves it.
func (r *RunDir) Close() error {
	if r == nil || r.lock == nil {
		return nil
	}
	var err error
	if r.owned {
		err = unlockRemove(r.lock, filepath.Join(r.Path, LockFile))
	} else {
		err = r.lock.Close() // closing the descriptor releases the lock
	}
	r.lock = nil
	return err
}

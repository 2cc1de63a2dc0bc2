//go:build unix && !aix

package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive advisory lock (flock) on path, creating the
// file if needed, and, when record is set, writes this process's pid into
// it. Another holder makes it fail with that holder's pid.
func lockFile(path string, record bool) (*os.File, error) {
	flags := os.O_RDWR
	if record {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrNotExist) && !record {
		return nil, nil // a dry run in a directory without a lock file
	}
	if err != nil {
		return nil, fmt.Errorf("run directory lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder := "another process"
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil {
				holder = fmt.Sprintf("process %d", pid)
			}
			return nil, fmt.Errorf("run directory %s is in use by %s (it holds %s); wait for it or use another --out",
				strings.TrimSuffix(path, string(os.PathSeparator)+LockFile), holder, path)
		}
		return nil, fmt.Errorf("run directory lock %s: %w", path, err)
	}
	if !samePath(f, path) {
		// The holder removed the file as it closed (RunDir.Close) between
		// our open and our lock: the lock is on a file nobody else will
		// open. Take the one at path now.
		f.Close()
		return lockFile(path, record)
	}
	if record {
		if err := errors.Join(f.Truncate(0), writeAt(f, strconv.Itoa(os.Getpid())+"\n")); err != nil {
			f.Close()
			return nil, fmt.Errorf("run directory lock %s: %w", path, err)
		}
	}
	return f, nil
}

// samePath reports whether the open file f is still the file at path.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// unlockRemove removes the lock file at path while f holds its lock, then
// releases it: a finished run leaves no lock file behind. A process that
// opened the file before it went finds it gone once it holds the lock
// (samePath) and locks the file at path anew.
func unlockRemove(f *os.File, path string) error {
	err := os.Remove(path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, f.Close())
}

func writeAt(f *os.File, s string) error {
	_, err := f.WriteAt([]byte(s), 0)
	return err
}

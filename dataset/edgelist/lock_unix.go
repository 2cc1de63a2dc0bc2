//go:build unix && !aix

package edgelist

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock on the directory dir, which the system
// drops when the process ends, however it ends; held is false when another
// import holds it.
func tryLock(dir string) (f *os.File, held bool, err error) {
	f, err = os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, true, nil
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return f, false, nil
}

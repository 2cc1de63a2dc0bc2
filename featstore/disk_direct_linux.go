//go:build linux

package featstore

import "golang.org/x/sys/unix"

// openDirect opens path for reading with O_DIRECT.
func openDirect(path string) (int, error) {
	return unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
}

// preadDirect is a positional read of a file opened by openDirect.
func preadDirect(fd int, p []byte, off int64) (int, error) { return unix.Pread(fd, p, off) }

func closeDirect(fd int) { unix.Close(fd) }

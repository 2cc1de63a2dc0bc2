//go:build !linux

package featstore

import "errors"

// openDirect refuses: reads with O_DIRECT are Linux's.
func openDirect(string) (int, error) { return -1, errors.ErrUnsupported }

func preadDirect(int, []byte, int64) (int, error) { return 0, errors.ErrUnsupported }

func closeDirect(int) {}

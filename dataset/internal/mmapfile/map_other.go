//go:build !unix

package mmapfile

import (
	"errors"
	"os"
)

// ReadOnly cannot map on this system: the callers read the file instead.
func ReadOnly(*os.File, int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("no memory mapping on this system")
}

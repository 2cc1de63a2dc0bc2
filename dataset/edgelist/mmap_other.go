//go:build !unix

package edgelist

import (
	"errors"
	"os"
)

// mapFile cannot map here: openMapped reads the file instead.
func mapFile(*os.File, int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("no memory mapping on this system")
}

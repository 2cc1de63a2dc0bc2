package featstore

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// DirectFile is a RowFile that says where its rows lie
// (dataset.FeatureFile), so that a Disk store may read them itself with
// O_DIRECT, past the page cache (DiskConfig.Direct).
type DirectFile interface {
	RowFile
	// Location is the file's path and the bytes before row 0.
	Location() (path string, offset int64)
}

// blockSize is the alignment of a direct read's offset, length and
// buffer: 4 KiB, a multiple of every logical block size Linux's file
// systems use.
const blockSize = 4096

// alignBlock is n rounded up to whole blocks.
func alignBlock(n int64) int64 { return (n + blockSize - 1) &^ (blockSize - 1) }

// aligned is the part of buf that starts at a block boundary, whole blocks
// long (buf at least a block longer than that).
func aligned(buf []byte) []byte {
	skip := int((blockSize - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%blockSize) % blockSize)
	return buf[skip : skip+int(int64(len(buf)-skip)&^(blockSize-1))]
}

// directFile is a file opened with O_DIRECT for a Disk store's reads.
type directFile struct {
	path   string
	offset int64 // bytes before row 0
	fd     int
	// pread is a positional read of fd (preadDirect; a test's refusal).
	pread func(fd int, p []byte, off int64) (int, error)
}

// openDirectFile opens f's file with O_DIRECT where f says where its rows
// lie; the error says why not (the file system refuses it, or f cannot
// say).
func openDirectFile(f RowFile) (*directFile, error) {
	df, ok := f.(DirectFile)
	if !ok {
		return nil, fmt.Errorf("the rows' file (%T) does not say where they lie", f)
	}
	path, offset := df.Location()
	fd, err := openDirect(path)
	if err != nil {
		return nil, fmt.Errorf("%s: opening with O_DIRECT: %w", path, err)
	}
	return &directFile{path: path, offset: offset, fd: fd, pread: preadDirect}, nil
}

// readAt reads p (aligned, whole blocks) from off (aligned) on, until p
// is full or the file ends (a read of less than whole blocks, or none);
// n is what was read.
func (f *directFile) readAt(p []byte, off int64) (n int, err error) {
	for n < len(p) {
		k, err := f.pread(f.fd, p[n:], off+int64(n))
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return n, err
		}
		n += k
		if k == 0 || k%blockSize != 0 {
			break
		}
	}
	return n, nil
}

func (f *directFile) close() { closeDirect(f.fd) }

package edgelist

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"github.com/fanout-gnn/fanout/dataset/internal/mmapfile"
)

// mapped is a raw little-endian array file of ImportBounded's graph, in
// memory: mapped where the system can (mmapfile.ReadOnly), otherwise read.
type mapped struct {
	data  []byte
	unmap func() error
}

// openMapped maps or reads the file at path, of elem-byte elements.
func openMapped(path string, elem int) (*mapped, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size()%int64(elem) != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of %d-byte elements", path, st.Size(), elem)
	}
	if st.Size() == 0 {
		return &mapped{unmap: func() error { return nil }}, nil
	}
	if littleEndianHost() {
		if data, unmap, err := mmapfile.ReadOnly(f, st.Size()); err == nil {
			return &mapped{data: data, unmap: unmap}, nil
		}
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &mapped{data: data, unmap: func() error { return nil }}, nil
}

// littleEndianHost reports whether the host stores integers
// little-endian, as the files are.
func littleEndianHost() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}

// int64s is the file as int64 values.
func (m *mapped) int64s() []int64 {
	return view(m, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
}

// int32s is the file as int32 values.
func (m *mapped) int32s() []int32 {
	return view(m, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
}

// view is the file's data as T values: the memory itself on a
// little-endian host, otherwise a decoded copy.
func view[T int32 | int64](m *mapped, decode func([]byte) T) []T {
	size := int(unsafe.Sizeof(T(0)))
	if len(m.data) == 0 {
		return []T{}
	}
	if littleEndianHost() {
		return unsafe.Slice((*T)(unsafe.Pointer(&m.data[0])), len(m.data)/size)
	}
	out := make([]T, len(m.data)/size)
	for i := range out {
		out[i] = decode(m.data[size*i:])
	}
	return out
}

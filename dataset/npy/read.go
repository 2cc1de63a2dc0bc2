package npy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// layout is what a header says about the data that follows it.
type layout struct {
	h     Header
	t     dtype
	count int64 // elements
	bytes int64 // count * element size
}

// describe renders the layout for messages: "1000x100 float32 (400000 bytes)".
func (l layout) describe() string {
	return fmt.Sprintf("%s %s (%d bytes)", shapeString(l.h.Shape), l.t.name(), l.bytes)
}

// checkHeader validates a parsed header and derives the data layout.
func checkHeader(h Header) (layout, error) {
	t, err := parseDescr(h.Descr)
	if err != nil {
		return layout{}, err
	}
	if h.FortranOrder && len(h.Shape) >= 2 {
		return layout{}, fmt.Errorf("Fortran (column-major) order is not supported for the %d-D shape %s; save it in C order (numpy.ascontiguousarray)",
			len(h.Shape), shapeString(h.Shape))
	}
	n, err := h.NumElements()
	if err != nil {
		return layout{}, err
	}
	if n > maxInt/int64(t.size) {
		return layout{}, fmt.Errorf("shape %s of %s is too large", shapeString(h.Shape), t.name())
	}
	return layout{h: h, t: t, count: n, bytes: n * int64(t.size)}, nil
}

// maxInt is the largest int, as an int64.
const maxInt = int64(^uint(0) >> 1)

// Read reads a whole .npy array from r. data is a []bool, []int8, []uint8,
// []int16, []uint16, []int32, []uint32, []int64, []uint64, []float32 or
// []float64 holding the elements in C order; shape gives the dimensions
// (empty for a scalar). Big-endian files are converted to host order. Memory
// grows with the data actually read, so a lying header cannot force a huge
// allocation.
func Read(r io.Reader) (data any, shape []int64, err error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, nil, err
	}
	l, err := checkHeader(h)
	if err != nil {
		return nil, nil, err
	}
	data, err = readBody(r, l, false)
	if err != nil {
		return nil, nil, err
	}
	return data, h.Shape, nil
}

// ReadFile reads the .npy file at path. Errors name the file. The file must
// hold exactly the bytes its header announces.
func ReadFile(path string) (any, []int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, shape, err := readFile(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, shape, nil
}

// readFile reads an opened .npy file after checking its size.
func readFile(f *os.File) (any, []int64, error) {
	br := bufio.NewReaderSize(f, 4096)
	h, err := ReadHeader(br)
	if err != nil {
		return nil, nil, err
	}
	l, err := checkHeader(h)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	trusted := false
	if st.Mode().IsRegular() {
		if err := checkSize(l, st.Size()); err != nil {
			return nil, nil, err
		}
		trusted = true
	}
	data, err := readBody(br, l, trusted)
	if err != nil {
		return nil, nil, err
	}
	return data, h.Shape, nil
}

// checkSize compares the data bytes a file holds with what its header says.
func checkSize(l layout, fileSize int64) error {
	have := fileSize - l.h.DataOffset
	if have < l.bytes {
		return fmt.Errorf("truncated: header says %s but file has %d bytes of data", l.describe(), max(have, 0))
	}
	if have > l.bytes {
		return fmt.Errorf("header says %s but file has %d bytes of data (%d extra)", l.describe(), have, have-l.bytes)
	}
	return nil
}

// readBody reads l.count elements from r. With trusted set (the size was
// already checked) the slice is allocated at once; otherwise it grows as
// data arrives.
func readBody(r io.Reader, l layout, trusted bool) (any, error) {
	if l.t.kind != 'b' {
		return l.t.ops().read(r, l, trusted)
	}
	s, err := readInto[bool](r, l, trusted)
	if err != nil {
		return nil, err
	}
	for _, b := range asBytes(s) { // a Go bool must be 0 or 1
		if b > 1 {
			return nil, fmt.Errorf("bool array holds byte value %d (want 0 or 1)", b)
		}
	}
	return s, nil
}

// growStep is the initial allocation, in bytes, when the size is not trusted.
const growStep = 1 << 20

// readInto reads l.count elements of type T from r and converts them to host
// byte order.
func readInto[T elem](r io.Reader, l layout, trusted bool) ([]T, error) {
	size := int64(l.t.size)
	capElems := l.count
	if !trusted {
		capElems = min(l.count, growStep/size)
	}
	s := make([]T, capElems)
	var filled int64 // elements read
	for filled < l.count {
		if filled == int64(len(s)) {
			bigger := make([]T, min(2*int64(len(s)), l.count))
			copy(bigger, s)
			s = bigger
		}
		b := asBytes(s[filled:])
		n, err := io.ReadFull(r, b)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				got := filled*size + int64(n)
				return nil, fmt.Errorf("truncated: header says %s but file has %d bytes of data", l.describe(), got)
			}
			return nil, err
		}
		filled = int64(len(s))
	}
	if l.t.needsSwap() {
		swapBytes(asBytes(s), l.t.size)
	}
	return s, nil
}

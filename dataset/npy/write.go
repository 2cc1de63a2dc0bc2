package npy

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// Write writes data as a little-endian, C-order .npy array (format 1.0, or
// 2.0 when the header needs it) with the given shape. data is a []float32,
// []float64, []int8/16/32/64, []uint8/16/32/64 or []bool; the product of
// shape must equal its length (an empty shape writes a scalar of length 1).
func Write(w io.Writer, data any, shape []int64) error {
	t, b, err := arrayOf(data)
	if err != nil {
		return err
	}
	n, err := Header{Shape: shape}.NumElements()
	if err != nil {
		return err
	}
	if have := int64(len(b) / t.size); have != n {
		return fmt.Errorf("shape %s holds %d elements but the slice has %d", shapeString(shape), n, have)
	}
	if _, err := w.Write(formatHeader(t.descr(), shape)); err != nil {
		return err
	}
	if hostLittleEndian() || t.size == 1 {
		_, err = w.Write(b)
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for len(b) > 0 {
		k := min(len(b), cap(buf))
		buf = append(buf[:0], b[:k]...)
		swapBytes(buf, t.size)
		if _, err := w.Write(buf); err != nil {
			return err
		}
		b = b[k:]
	}
	return nil
}

// WriteFile writes data to path atomically (internal/atomicfile): into a
// temporary file in the same directory, synced to disk, then renamed over
// path. On failure path is untouched and the temporary file is removed.
// Errors name path.
func WriteFile(path string, data any, shape []int64) error {
	return atomicfile.WriteWith(path, func(w io.Writer) error { return Write(w, data, shape) })
}

package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"unsafe"
)

// dtype is a parsed NumPy type descriptor such as "<f4".
type dtype struct {
	kind      byte // 'b' bool, 'i' signed, 'u' unsigned, 'f' float
	size      int  // bytes per element
	bigEndian bool // byte order in the file
}

// name is the Go-style element type name used in messages ("float32").
func (t dtype) name() string {
	switch t.kind {
	case 'b':
		return "bool"
	case 'i':
		return fmt.Sprintf("int%d", 8*t.size)
	case 'u':
		return fmt.Sprintf("uint%d", 8*t.size)
	default:
		return fmt.Sprintf("float%d", 8*t.size)
	}
}

// needsSwap reports whether elements must be byte-swapped to host order.
func (t dtype) needsSwap() bool {
	return t.size > 1 && t.bigEndian == hostLittleEndian()
}

// hostLittleEndian reports the byte order of the machine running the program.
func hostLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// parseDescr parses a simple NumPy descriptor: a byte-order character
// ('<', '>', '|' or '='), a kind and an element size.
func parseDescr(s string) (dtype, error) {
	if len(s) < 3 {
		return dtype{}, fmt.Errorf("dtype %q is not supported (want e.g. <f4, <i8, |u1)", s)
	}
	var t dtype
	switch s[0] {
	case '<', '|':
	case '=':
		t.bigEndian = !hostLittleEndian()
	case '>':
		t.bigEndian = true
	default:
		return dtype{}, fmt.Errorf("dtype %q: unknown byte order %q", s, s[0])
	}
	t.kind = s[1]
	size := 0
	for _, c := range s[2:] {
		if c < '0' || c > '9' || size > 64 {
			return dtype{}, fmt.Errorf("dtype %q is not supported (want e.g. <f4, <i8, |u1)", s)
		}
		size = size*10 + int(c-'0')
	}
	t.size = size
	ok := false
	switch t.kind {
	case 'b':
		ok = size == 1
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'f':
		ok = size == 4 || size == 8
	}
	if !ok {
		return dtype{}, fmt.Errorf("dtype %q is not supported (want bool, int8-64, uint8-64, float32 or float64)", s)
	}
	return t, nil
}

// Descr returns the little-endian NumPy descriptor for a typed slice
// ("<f4" for []float32), or an error for an unsupported type.
func Descr(data any) (string, error) {
	t, _, err := arrayOf(data)
	if err != nil {
		return "", err
	}
	return t.descr(), nil
}

// descr renders t as a little-endian descriptor.
func (t dtype) descr() string {
	order := byte('<')
	if t.size == 1 {
		order = '|'
	}
	return fmt.Sprintf("%c%c%d", order, t.kind, t.size)
}

// elem is every element type an array may hold.
type elem interface {
	~bool | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// asBytes views a typed slice as its bytes (no copy).
func asBytes[T elem](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// arrayOf returns the dtype of a supported slice type, with host byte
// order, and views the slice as its bytes (no copy).
func arrayOf(data any) (dtype, []byte, error) {
	switch s := data.(type) {
	case []bool:
		return hostArray('b', s)
	case []int8:
		return hostArray('i', s)
	case []uint8:
		return hostArray('u', s)
	case []int16:
		return hostArray('i', s)
	case []uint16:
		return hostArray('u', s)
	case []int32:
		return hostArray('i', s)
	case []uint32:
		return hostArray('u', s)
	case []int64:
		return hostArray('i', s)
	case []uint64:
		return hostArray('u', s)
	case []float32:
		return hostArray('f', s)
	case []float64:
		return hostArray('f', s)
	}
	return dtype{}, nil, fmt.Errorf("unsupported slice type %T (want []float32, []float64, []int8-64, []uint8-64 or []bool)", data)
}

// hostArray is arrayOf for a []T whose elements are of that kind.
func hostArray[T elem](kind byte, s []T) (dtype, []byte, error) {
	size := int(unsafe.Sizeof(*new(T)))
	return dtype{kind: kind, size: size, bigEndian: size > 1 && !hostLittleEndian()}, asBytes(s), nil
}

// viewAs reinterprets b (aligned for T, length a multiple of T's size) as a []T.
func viewAs[T elem](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// elemOps is what reading does with the elements of one dtype, bound to
// its Go element type.
type elemOps struct {
	view func(b []byte) any                                     // viewAs
	read func(r io.Reader, l layout, trusted bool) (any, error) // readInto
}

// opsOf binds elemOps to T.
func opsOf[T elem]() elemOps {
	return elemOps{
		view: func(b []byte) any { return viewAs[T](b) },
		read: func(r io.Reader, l layout, trusted bool) (any, error) { return readInto[T](r, l, trusted) },
	}
}

// ops is t's elemOps: the one place a dtype picks its Go element type.
func (t dtype) ops() elemOps {
	switch {
	case t.kind == 'b':
		return opsOf[bool]()
	case t.kind == 'i' && t.size == 1:
		return opsOf[int8]()
	case t.kind == 'u' && t.size == 1:
		return opsOf[uint8]()
	case t.kind == 'i' && t.size == 2:
		return opsOf[int16]()
	case t.kind == 'u' && t.size == 2:
		return opsOf[uint16]()
	case t.kind == 'i' && t.size == 4:
		return opsOf[int32]()
	case t.kind == 'u' && t.size == 4:
		return opsOf[uint32]()
	case t.kind == 'i' && t.size == 8:
		return opsOf[int64]()
	case t.kind == 'u' && t.size == 8:
		return opsOf[uint64]()
	case t.kind == 'f' && t.size == 4:
		return opsOf[float32]()
	default:
		return opsOf[float64]()
	}
}

// viewBytes reinterprets aligned bytes as the slice type of t (no copy).
func viewBytes(t dtype, b []byte) any {
	return t.ops().view(b)
}

// swapBytes reverses the byte order of each size-byte element of b in place.
func swapBytes(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+2 <= len(b); i += 2 {
			binary.LittleEndian.PutUint16(b[i:], bits.ReverseBytes16(binary.LittleEndian.Uint16(b[i:])))
		}
	case 4:
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], bits.ReverseBytes32(binary.LittleEndian.Uint32(b[i:])))
		}
	case 8:
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], bits.ReverseBytes64(binary.LittleEndian.Uint64(b[i:])))
		}
	}
}

package npy

import (
	"encoding/binary"
	"fmt"
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
	t, err := dtypeOf(data)
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

// dtypeOf returns the dtype of a supported slice type, with host byte order.
func dtypeOf(data any) (dtype, error) {
	big := !hostLittleEndian()
	switch data.(type) {
	case []bool:
		return dtype{'b', 1, false}, nil
	case []int8:
		return dtype{'i', 1, false}, nil
	case []uint8:
		return dtype{'u', 1, false}, nil
	case []int16:
		return dtype{'i', 2, big}, nil
	case []uint16:
		return dtype{'u', 2, big}, nil
	case []int32:
		return dtype{'i', 4, big}, nil
	case []uint32:
		return dtype{'u', 4, big}, nil
	case []int64:
		return dtype{'i', 8, big}, nil
	case []uint64:
		return dtype{'u', 8, big}, nil
	case []float32:
		return dtype{'f', 4, big}, nil
	case []float64:
		return dtype{'f', 8, big}, nil
	}
	return dtype{}, fmt.Errorf("unsupported slice type %T (want []float32, []float64, []int8-64, []uint8-64 or []bool)", data)
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

// bytesOf views any supported slice as its bytes (no copy).
func bytesOf(data any) []byte {
	switch s := data.(type) {
	case []bool:
		return asBytes(s)
	case []int8:
		return asBytes(s)
	case []uint8:
		return s
	case []int16:
		return asBytes(s)
	case []uint16:
		return asBytes(s)
	case []int32:
		return asBytes(s)
	case []uint32:
		return asBytes(s)
	case []int64:
		return asBytes(s)
	case []uint64:
		return asBytes(s)
	case []float32:
		return asBytes(s)
	case []float64:
		return asBytes(s)
	}
	return nil
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

// viewBytes reinterprets aligned bytes as the slice type of t (no copy).
func viewBytes(t dtype, b []byte) any {
	switch {
	case t.kind == 'b':
		return viewAs[bool](b)
	case t.kind == 'i' && t.size == 1:
		return viewAs[int8](b)
	case t.kind == 'u' && t.size == 1:
		return viewAs[uint8](b)
	case t.kind == 'i' && t.size == 2:
		return viewAs[int16](b)
	case t.kind == 'u' && t.size == 2:
		return viewAs[uint16](b)
	case t.kind == 'i' && t.size == 4:
		return viewAs[int32](b)
	case t.kind == 'u' && t.size == 4:
		return viewAs[uint32](b)
	case t.kind == 'i' && t.size == 8:
		return viewAs[int64](b)
	case t.kind == 'u' && t.size == 8:
		return viewAs[uint64](b)
	case t.kind == 'f' && t.size == 4:
		return viewAs[float32](b)
	default:
		return viewAs[float64](b)
	}
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

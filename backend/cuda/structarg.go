package cuda

import (
	"encoding/binary"
)

// structArg builds the bytes of a kernel parameter passed by value as a C
// struct: little-endian fields at their natural alignment, the size padded
// to the struct's alignment (8: every struct here holds pointers).
type structArg struct{ b []byte }

func (s *structArg) align(n int) {
	for len(s.b)%n != 0 {
		s.b = append(s.b, 0)
	}
}

func (s *structArg) u64(v uint64) *structArg {
	s.align(8)
	s.b = binary.LittleEndian.AppendUint64(s.b, v)
	return s
}

func (s *structArg) u32(v uint32) *structArg {
	s.align(4)
	s.b = binary.LittleEndian.AppendUint32(s.b, v)
	return s
}

func (s *structArg) ptr(p uintptr) *structArg { return s.u64(uint64(p)) }
func (s *structArg) i64(v int64) *structArg   { return s.u64(uint64(v)) }
func (s *structArg) i32(v int) *structArg     { return s.u32(uint32(int32(v))) }

// zeros appends n zero bytes (unused table entries).
func (s *structArg) zeros(n int) *structArg {
	s.b = append(s.b, make([]byte, n)...)
	return s
}

// done pads the struct to 8-byte alignment and returns its bytes.
func (s *structArg) done() []byte {
	s.align(8)
	return s.b
}

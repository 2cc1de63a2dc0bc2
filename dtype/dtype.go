// Package dtype names the element types of buffers and tables (float32,
// int32, int64, uint8, bfloat16 bits) and converts float32 to and from
// bfloat16. It is a leaf: the backends and the on-disk dataset share it.
package dtype

// DType is the element type of a buffer or a table.
type DType uint8

// Element types.
const (
	F32  DType = iota + 1 // float32
	I32                   // int32
	I64                   // int64
	U8                    // uint8
	BF16                  // bfloat16, held as uint16 bit patterns (feature tables: Gather converts to float32)
)

// Size is the element size in bytes.
func (d DType) Size() int {
	switch d {
	case F32, I32:
		return 4
	case I64:
		return 8
	case U8:
		return 1
	case BF16:
		return 2
	}
	return 0
}

func (d DType) String() string {
	switch d {
	case F32:
		return "float32"
	case I32:
		return "int32"
	case I64:
		return "int64"
	case U8:
		return "uint8"
	case BF16:
		return "bfloat16"
	}
	return "invalid"
}

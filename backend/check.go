package backend

//go:generate go run ./internal/wrapgen/gen

import (
	"fmt"
	"math"
	"slices"
)

// The helpers below are the shapes and checks the op descriptions
// (ops/*.yaml) name, written once for every backend's generated checks.

// CheckDim checks a positive static size (argument name): in [1, 2^31),
// as the CUDA kernels take it.
func CheckDim(name string, v int) error {
	if v <= 0 || v > math.MaxInt32 {
		return fmt.Errorf("%s: %d, want in [1, 2^31)", name, v)
	}
	return nil
}

// CheckSize checks a static size that may be 0: in [0, 2^31).
func CheckSize(name string, v int) error {
	if v < 0 || v > math.MaxInt32 {
		return fmt.Errorf("%s: %d, want in [0, 2^31)", name, v)
	}
	return nil
}

// CheckProb checks a dropout probability: 0 <= p < 1.
func CheckProb(name string, p float32) error {
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("%s: dropout probability %g, want 0 <= p < 1", name, p)
	}
	return nil
}

// CheckNumber checks a float32 that must not be NaN.
func CheckNumber(name string, v float32) error {
	if v != v {
		return fmt.Errorf("%s is NaN", name)
	}
	return nil
}

// TypeAmong is the type an argument that may have any of the types dts
// is checked against: its own type dt when that is one of them, else
// dts[0] (which the check's error then names).
func TypeAmong(dt DType, dts ...DType) DType {
	if slices.Contains(dts, dt) {
		return dt
	}
	return dts[0]
}

// CheckBF16Widths checks the widths of a bfloat16 product: each must be
// even (Linear and LinearBackwardWeight over BF16 operands).
func CheckBF16Widths(widths ...int) error {
	for _, n := range widths {
		if n%2 != 0 {
			return fmt.Errorf("width %d: bfloat16 products need even widths", n)
		}
	}
	return nil
}

// CheckColumns checks AddRows's column window: columns [off, off+dim) must
// lie inside rows of ld.
func CheckColumns(off, dim, ld int) error {
	if off < 0 || off+dim > ld {
		return fmt.Errorf("columns [%d, %d) outside rows of %d", off, off+dim, ld)
	}
	return nil
}

// ExclusionBuckets is the buckets of the exclusion of a step of capacity
// positives (BuildExclusion): a power of two of at least 4·capacity, so
// that at most half hold one of the 2·capacity keys' vertices.
func ExclusionBuckets(capacity int) int {
	n := 4
	for n < 4*capacity {
		n *= 2
	}
	return n
}

// ExclusionSize is the I64 elements of the exclusion of a step of
// capacity positives: 2·capacity keys, then ExclusionBuckets(capacity).
func ExclusionSize(capacity int) int { return 2*max(capacity, 0) + ExclusionBuckets(capacity) }

// CheckWidth checks a graph attention layer's width heads·dim against the
// int32 arithmetic of the kernels (HeadDot, HeadAggregate and their
// backwards).
func CheckWidth(heads, dim int) error {
	if int64(heads)*int64(dim) > math.MaxInt32/64 {
		return fmt.Errorf("heads %d × dim %d too wide", heads, dim)
	}
	return nil
}

// RowType is the element type of the rows Gather writes from a table of
// type dt: float32 for a bfloat16 table (widened), dt otherwise.
func RowType(dt DType) DType {
	if dt == BF16 {
		return F32
	}
	return dt
}

// MaxScoreHeads bounds the heads of SharedAttention's ScoreProducts and its
// backward: a layer's score products are narrow (a column a head), which
// the CUDA backend's narrow-product kernels take up to 8 of.
const MaxScoreHeads = 8

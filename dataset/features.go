package dataset

import (
	"fmt"

	"github.com/fanout-gnn/fanout/dtype"
	"github.com/fanout-gnn/fanout/internal/parallel"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// Feature dtypes, as the manifest's feature_dtype key names them.
const (
	DTypeFloat32  = "float32"  // feat.npy holds <f4 values (also when the key is absent)
	DTypeBFloat16 = "bfloat16" // feat.npy holds <u2: bfloat16 bit patterns
)

// ParseFeatureDType reads a features' dtype name: float32 (or "", a
// manifest without the key) or bfloat16.
func ParseFeatureDType(s string) (dtype.DType, error) {
	switch s {
	case "", DTypeFloat32:
		return dtype.F32, nil
	case DTypeBFloat16:
		return dtype.BF16, nil
	}
	return 0, fmt.Errorf("feature_dtype is %s, want %s or %s", quote.Quote(s), DTypeFloat32, DTypeBFloat16)
}

// FeatureDType is how the features are held: dtype.BF16 when
// FeaturesBF16 is set (of a typed dataset: of any type), or features
// left on disk (of any type) are bfloat16, else dtype.F32.
func (d *Dataset) FeatureDType() dtype.DType {
	if d.FeatureFile != nil {
		return d.FeatureFile.DType
	}
	for _, t := range d.VertexTypes() {
		if t.FeaturesBF16 != nil || t.FeatureFile != nil && t.FeatureFile.DType == dtype.BF16 {
			return dtype.BF16
		}
	}
	return dtype.F32
}

// FeatureTable is the features as held, without a copy: Features
// ([]float32) or FeaturesBF16 ([]uint16 bfloat16 bit patterns), the forms
// backend.Backend's Upload and the feature stores take.
func (d *Dataset) FeatureTable() any {
	if d.FeaturesBF16 != nil {
		return d.FeaturesBF16
	}
	return d.Features
}

// FeatureBytes is the size of the feature table as held (and as feat.npy
// stores it, less the header): 4 or 2 bytes per value; of a typed
// dataset, of every type's table; of features left on disk, the file's.
func (d *Dataset) FeatureBytes() int64 {
	if f := d.FeatureFile; f != nil {
		return f.Rows * f.RowBytes()
	}
	var b int64
	for _, t := range d.VertexTypes() {
		b += t.featureBytes()
	}
	return b
}

// RoundFeatures replaces float32 features with bfloat16 ones
// (dtype.BF16Bits: round to nearest, ties to even), half the bytes; the
// float32 slice is dropped, not modified. Rounding is what a run with
// --feature-dtype bfloat16 does to float32 features as it uploads them, so
// the two hold the same numbers. Features already bfloat16 are kept. A
// typed dataset's types are each rounded.
func (d *Dataset) RoundFeatures() {
	for i := range d.Types {
		t := &d.Types[i]
		if t.Features != nil {
			t.Features, t.FeaturesBF16 = nil, convertAll(t.Features, dtype.BF16Bits)
		}
	}
	if d.FeaturesBF16 != nil || d.Typed() {
		return
	}
	d.Features, d.FeaturesBF16 = nil, convertAll(d.Features, dtype.BF16Bits)
}

// WidenFeatures replaces bfloat16 features with their float32 values
// (exact), a new table of 4 bytes per value: twice the bfloat16 table's
// host memory. Features already float32 are kept. A typed dataset's types
// are each widened.
func (d *Dataset) WidenFeatures() {
	for i := range d.Types {
		t := &d.Types[i]
		if t.FeaturesBF16 != nil {
			t.Features, t.FeaturesBF16 = convertAll(t.FeaturesBF16, dtype.BF16Float), nil
		}
	}
	if d.FeaturesBF16 == nil {
		return
	}
	d.Features, d.FeaturesBF16 = convertAll(d.FeaturesBF16, dtype.BF16Float), nil
}

// convertAll is f of every value of src, a new slice, computed in parallel.
func convertAll[S, D any](src []S, f func(S) D) []D {
	out := make([]D, len(src))
	parallel.Range(int64(len(src)), parallel.Threads(0), func(_ int, lo, hi int64) {
		for i := lo; i < hi; i++ {
			out[i] = f(src[i])
		}
	})
	return out
}

// CheckFeaturesBF16 is CheckFeatures for bfloat16 bit patterns: a value
// whose exponent bits are all ones is NaN or infinite.
func CheckFeaturesBF16(feat []uint16, dim int) error {
	if dim < 1 {
		return nil
	}
	return firstError(int64(len(feat)), func(lo, hi int64) error {
		for i, h := range feat[lo:hi] {
			if h&0x7f80 == 0x7f80 {
				return notFinite(lo+int64(i), dim, fmt.Sprintf("%v (bfloat16 bits %#04x)", dtype.BF16Float(h), h))
			}
		}
		return nil
	})
}

// notFinite is the error of a feature at flat index at that is not a
// finite number.
func notFinite(at int64, dim int, value string) error {
	return fmt.Errorf("row %d (vertex %d), column %d is %s; features must be finite numbers",
		at/int64(dim), at/int64(dim), at%int64(dim), value)
}

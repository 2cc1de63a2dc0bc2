package torchzip

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/dataset/internal/pickle"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// storageType describes a torch storage class.
type storageType struct {
	dtype string
	size  int
	float bool
}

// storageClass describes the torch storage class of the given name (in
// module torch); ok is false for one the reader does not accept.
func storageClass(name string) (typ storageType, ok bool) {
	classes := [...]struct {
		name string
		typ  storageType
	}{
		{"LongStorage", storageType{"int64", 8, false}}, {"IntStorage", storageType{"int32", 4, false}},
		{"ShortStorage", storageType{"int16", 2, false}}, {"CharStorage", storageType{"int8", 1, false}},
		{"ByteStorage", storageType{"uint8", 1, false}}, {"BoolStorage", storageType{"bool", 1, false}},
		{"FloatStorage", storageType{"float32", 4, true}}, {"DoubleStorage", storageType{"float64", 8, true}},
	}
	for _, c := range classes {
		if c.name == name {
			return c.typ, true
		}
	}
	return storageType{}, false
}

// storage is a loaded tensor storage: numel elements of typ.
type storage struct {
	key  string
	typ  storageType
	raw  []byte
	numl int64
}

// storages loads the archive's storages on demand, within a byte budget.
type storages struct {
	zr     *zip.Reader
	prefix string
	budget int64
	loaded map[string]*storage
}

// load resolves a persistent id ('storage', StorageClass, key, location,
// numel).
func (s *storages) load(pid any) (any, error) {
	t, ok := pid.(pickle.Tuple)
	if !ok || len(t) != 5 {
		return nil, fmt.Errorf("persistent id is a %s, want ('storage', class, key, location, numel)", typeName(pid))
	}
	if tag, _ := t[0].(string); tag != "storage" {
		return nil, fmt.Errorf("persistent id of kind %s, want 'storage'", typeName(t[0]))
	}
	g, ok := t[1].(*pickle.Global)
	if !ok || g.Module != "torch" {
		return nil, fmt.Errorf("storage class is a %s, want a torch storage class", typeName(t[1]))
	}
	typ, ok := storageClass(g.Name)
	if !ok {
		return nil, fmt.Errorf("storage class %s is not supported (want integer, bool, float or double)", quote.Quote("torch."+g.Name))
	}
	key, ok1 := t[2].(string)
	numel, ok2 := t[4].(int64)
	if !ok1 || !ok2 || numel < 0 {
		return nil, fmt.Errorf("storage key %s and size %s: want a string and a non-negative int", typeName(t[2]), typeName(t[4]))
	}
	if st, ok := s.loaded[key]; ok {
		if st.typ != typ || st.numl != numel {
			return nil, fmt.Errorf("storage %s is named twice with different types or sizes", quote.Quote(key))
		}
		return st, nil
	}
	if numel > s.budget/int64(typ.size) {
		return nil, fmt.Errorf("storage %s of %d %s elements is over the %d bytes allowed", quote.Quote(key), numel, typ.dtype, s.budget)
	}
	want := numel * int64(typ.size)
	var f *zip.File
	for _, e := range s.zr.File {
		if e.Name == s.prefix+key {
			f = e
		}
	}
	if f == nil {
		return nil, fmt.Errorf("storage %s: no %s in the archive", quote.Quote(key), quote.Quote(s.prefix+key))
	}
	if f.UncompressedSize64 != uint64(want) {
		return nil, fmt.Errorf("storage %s: %s holds %d bytes, want %d (%d %s elements)", quote.Quote(key), quote.Quote(f.Name), f.UncompressedSize64, want, numel, typ.dtype)
	}
	raw, err := readEntry(f, want)
	if err != nil {
		return nil, err
	}
	s.budget -= want
	st := &storage{key: key, typ: typ, raw: raw, numl: numel}
	s.loaded[key] = st
	return st, nil
}

// rebuildTensor models torch._utils._rebuild_tensor_v2(storage,
// storage_offset, size, stride, requires_grad, backward_hooks[, metadata]):
// the elements at offset + Σ index·stride, gathered in C order; the
// decoded values count against the budget.
func (s *storages) rebuildTensor(args pickle.Tuple) (*Tensor, error) {
	if len(args) < 4 {
		return nil, fmt.Errorf("_rebuild_tensor_v2 takes at least 4 arguments, have %d", len(args))
	}
	st, ok := args[0].(*storage)
	if !ok {
		return nil, fmt.Errorf("_rebuild_tensor_v2 of a %s, want a storage", typeName(args[0]))
	}
	offset, ok := args[1].(int64)
	if !ok || offset < 0 {
		return nil, fmt.Errorf("tensor offset is a %s, want a non-negative int", typeName(args[1]))
	}
	size, err := dims(args[2], "size")
	if err != nil {
		return nil, err
	}
	stride, err := dims(args[3], "stride")
	if err != nil {
		return nil, err
	}
	if len(stride) != len(size) {
		return nil, fmt.Errorf("tensor of %d dimensions has %d strides", len(size), len(stride))
	}
	count, last := int64(1), offset
	for i, d := range size {
		if d > 0 && count > math.MaxInt64/d {
			return nil, fmt.Errorf("tensor size %v is too large", size)
		}
		count *= d
		if d > 0 {
			if stride[i] > 0 && d-1 > (math.MaxInt64-last)/stride[i] {
				return nil, fmt.Errorf("tensor size %v with stride %v overflows", size, stride)
			}
			last += (d - 1) * stride[i]
		}
	}
	if count > 0 && last >= st.numl {
		return nil, fmt.Errorf("tensor of size %v, stride %v at offset %d reaches element %d of storage %s, which holds %d", size, stride, offset, last, quote.Quote(st.key), st.numl)
	}
	if count > s.budget/8 { // decoded elements take 8 bytes each
		return nil, fmt.Errorf("tensor of size %v is over the %d bytes allowed", size, s.budget)
	}
	s.budget -= count * 8
	t := &Tensor{DType: st.typ.dtype, Shape: size}
	if st.typ.float {
		t.Floats = make([]float64, count)
	} else {
		t.Ints = make([]int64, count)
	}
	idx := make([]int64, len(size))
	for k := int64(0); k < count; k++ {
		at := offset
		for i, x := range idx {
			at += x * stride[i]
		}
		if t.Floats != nil {
			t.Floats[k] = st.float(at)
		} else {
			t.Ints[k] = st.int(at)
		}
		for i := len(idx) - 1; i >= 0; i-- { // next index in C order
			if idx[i]++; idx[i] < size[i] {
				break
			}
			idx[i] = 0
		}
	}
	return t, nil
}

// int reads integer element i.
func (s *storage) int(i int64) int64 {
	b := s.raw[i*int64(s.typ.size):]
	switch s.typ.dtype {
	case "int64":
		return int64(binary.LittleEndian.Uint64(b))
	case "int32":
		return int64(int32(binary.LittleEndian.Uint32(b)))
	case "int16":
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case "int8":
		return int64(int8(b[0]))
	}
	return int64(b[0]) // uint8, bool
}

// float reads floating-point element i.
func (s *storage) float(i int64) float64 {
	b := s.raw[i*int64(s.typ.size):]
	if s.typ.size == 4 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// dims converts a tensor's size or stride: a tuple of non-negative ints.
func dims(v any, what string) ([]int64, error) {
	t, ok := v.(pickle.Tuple)
	if !ok {
		return nil, fmt.Errorf("tensor %s is a %s, want a tuple of ints", what, typeName(v))
	}
	out := make([]int64, 0, len(t))
	for i, x := range t {
		if n, ok := x.(int64); ok && n >= 0 {
			out = append(out, n)
			continue
		}
		return nil, fmt.Errorf("tensor %s: element %d is %s, want a non-negative int", what, i, typeName(x))
	}
	return out, nil
}

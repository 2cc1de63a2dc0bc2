package cpu

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// buffer is a typed Go slice; exactly the slice of its dtype is set.
type buffer struct {
	dt  backend.DType
	f32 []float32
	i32 []int32
	i64 []int64
	u8  []uint8
	u16 []uint16 // BF16

	owner *Backend
	bytes int64 // counted size for Alloc/Upload buffers; 0 for views
	freed bool
}

// DType is the element type, 0 for a nil buffer.
func (x *buffer) DType() backend.DType {
	if x == nil {
		return 0
	}
	return x.dt
}

func (x *buffer) Len() int {
	switch x.dt {
	case backend.F32:
		return len(x.f32)
	case backend.I32:
		return len(x.i32)
	case backend.I64:
		return len(x.i64)
	case backend.U8:
		return len(x.u8)
	case backend.BF16:
		return len(x.u16)
	}
	return 0
}

// F32 returns the float32 slice behind a buffer of this backend (nil if it
// is not one). Tests and host-side code of the CPU path may use it to read
// results without a copy.
func F32(b backend.Buffer) []float32 {
	if x, ok := b.(*buffer); ok {
		return x.f32
	}
	return nil
}

// I32 returns the int32 slice behind a buffer of this backend (nil if it is
// not one).
func I32(b backend.Buffer) []int32 {
	if x, ok := b.(*buffer); ok {
		return x.i32
	}
	return nil
}

// Alloc returns a zeroed buffer of n elements.
func (b *Backend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	if dt.Size() == 0 {
		return nil, fmt.Errorf("cpu: Alloc: invalid dtype %d", dt)
	}
	if n < 0 {
		return nil, fmt.Errorf("cpu: Alloc: negative length %d", n)
	}
	x := &buffer{dt: dt, owner: b, bytes: int64(n) * int64(dt.Size())}
	switch dt {
	case backend.F32:
		x.f32 = make([]float32, n)
	case backend.I32:
		x.i32 = make([]int32, n)
	case backend.I64:
		x.i64 = make([]int64, n)
	case backend.U8:
		x.u8 = make([]uint8, n)
	case backend.BF16:
		x.u16 = make([]uint16, n)
	}
	b.account(x.bytes)
	return x, nil
}

// Upload wraps data ([]float32, []int32, []int64 or []uint8) without copying.
func (b *Backend) Upload(data any) (backend.Buffer, error) {
	x := &buffer{owner: b}
	switch d := data.(type) {
	case []float32:
		x.dt, x.f32 = backend.F32, d
	case []int32:
		x.dt, x.i32 = backend.I32, d
	case []int64:
		x.dt, x.i64 = backend.I64, d
	case []uint8:
		x.dt, x.u8 = backend.U8, d
	case []uint16:
		x.dt, x.u16 = backend.BF16, d
	default:
		return nil, fmt.Errorf("cpu: Upload: unsupported type %T (want []float32, []int32, []int64 or []uint8)", data)
	}
	x.bytes = int64(x.Len()) * int64(x.dt.Size())
	b.account(x.bytes)
	return x, nil
}

func (b *Backend) account(bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inUse += bytes
	b.peak = max(b.peak, b.inUse)
}

// View is elements [off, off+n) of buf, sharing its memory. A bad range is
// recorded as the sticky error and yields an empty buffer of buf's type.
func (b *Backend) View(buf backend.Buffer, off, n int) backend.Buffer {
	x, ok := buf.(*buffer)
	if !ok || x == nil {
		b.mu.Lock()
		b.fail(fmt.Errorf("cpu: View: %s", describeForeign(buf)))
		b.mu.Unlock()
		return &buffer{dt: backend.F32, owner: b}
	}
	v := &buffer{dt: x.dt, owner: b}
	if off < 0 || n < 0 || off+n > x.Len() {
		b.mu.Lock()
		b.fail(fmt.Errorf("cpu: View: range [%d, %d) outside buffer of %d elements", off, off+n, x.Len()))
		b.mu.Unlock()
		return v
	}
	switch x.dt {
	case backend.F32:
		v.f32 = x.f32[off : off+n : off+n]
	case backend.I32:
		v.i32 = x.i32[off : off+n : off+n]
	case backend.I64:
		v.i64 = x.i64[off : off+n : off+n]
	case backend.U8:
		v.u8 = x.u8[off : off+n : off+n]
	case backend.BF16:
		v.u16 = x.u16[off : off+n : off+n]
	}
	return v
}

// Free drops the buffer's memory. Views made earlier keep theirs alive.
func (b *Backend) Free(buf backend.Buffer) {
	x, ok := buf.(*buffer)
	if !ok || x == nil || x.freed {
		return
	}
	x.freed = true
	x.f32, x.i32, x.i64, x.u8, x.u16 = nil, nil, nil, nil, nil
	b.account(-x.bytes)
}

// Write copies src (a slice of buf's element type) into buf at element off.
func (b *Backend) Write(buf backend.Buffer, off int, src any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := copyInto(buf, off, src); err != nil {
		b.fail(fmt.Errorf("cpu: Write: %w", err))
	}
}

// Read copies elements of buf starting at off into dst (a slice of buf's
// element type).
func (b *Backend) Read(dst any, buf backend.Buffer, off int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := copyFrom(dst, buf, off); err != nil {
		b.fail(fmt.Errorf("cpu: Read: %w", err))
	}
}

// Fill sets every element of buf to v converted to buf's type.
func (b *Backend) Fill(buf backend.Buffer, v float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	x, ok := buf.(*buffer)
	if !ok || x == nil {
		b.fail(fmt.Errorf("cpu: Fill: %s", describeForeign(buf)))
		return
	}
	switch x.dt {
	case backend.F32:
		fillSlice(x.f32, float32(v))
	case backend.I32:
		fillSlice(x.i32, int32(v))
	case backend.I64:
		fillSlice(x.i64, int64(v))
	case backend.U8:
		fillSlice(x.u8, uint8(v))
	case backend.BF16:
		fillSlice(x.u16, backend.BF16Bits(float32(v)))
	}
}

func fillSlice[T any](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// UploadGraph makes csr resident, in place.
func (b *Backend) UploadGraph(csr *graph.CSR) (backend.Graph, error) {
	if csr == nil {
		return nil, fmt.Errorf("cpu: UploadGraph: nil graph")
	}
	if int64(len(csr.Indptr)) != csr.NumNodes+1 {
		return nil, fmt.Errorf("cpu: UploadGraph: indptr has %d entries for %d vertices (want %d)",
			len(csr.Indptr), csr.NumNodes, csr.NumNodes+1)
	}
	if err := csr.Narrow(); err != nil {
		return nil, fmt.Errorf("cpu: UploadGraph: %w", err)
	}
	return &cpuGraph{csr: csr}, nil
}

func copyInto(buf backend.Buffer, off int, src any) error {
	return transfer(buf, off, src, true)
}

func copyFrom(dst any, buf backend.Buffer, off int) error {
	return transfer(buf, off, dst, false)
}

// transfer copies the host slice h into buf at off (write) or buf at off
// into h, after checking that h's element type is buf's and that the range
// fits.
func transfer(buf backend.Buffer, off int, h any, write bool) error {
	x, ok := buf.(*buffer)
	if !ok || x == nil {
		return fmt.Errorf("%s", describeForeign(buf))
	}
	what := "destination"
	if write {
		what = "source"
	}
	var n int
	switch s := h.(type) {
	case []float32:
		n = moveChecked(x.f32, off, s, x.dt == backend.F32, write)
	case []int32:
		n = moveChecked(x.i32, off, s, x.dt == backend.I32, write)
	case []int64:
		n = moveChecked(x.i64, off, s, x.dt == backend.I64, write)
	case []uint8:
		n = moveChecked(x.u8, off, s, x.dt == backend.U8, write)
	case []uint16:
		n = moveChecked(x.u16, off, s, x.dt == backend.BF16, write)
	default:
		return fmt.Errorf("unsupported %s type %T", what, h)
	}
	switch n {
	case -1:
		return fmt.Errorf("%s %T does not match buffer type %s", what, h, x.dt)
	case -2:
		return fmt.Errorf("range at %d does not fit buffer of %d elements", off, x.Len())
	}
	return nil
}

// moveChecked copies h into b[off:] (write) or b[off:] into h; -1: wrong
// type, -2: out of range.
func moveChecked[T any](b []T, off int, h []T, typeOK, write bool) int {
	if !typeOK {
		return -1
	}
	if off < 0 || off+len(h) > len(b) {
		return -2
	}
	if write {
		return copy(b[off:], h)
	}
	return copy(h, b[off:])
}

// describeForeign explains why buf is not usable.
func describeForeign(buf backend.Buffer) string {
	if buf == nil {
		return "nil buffer"
	}
	if x, ok := buf.(*buffer); ok && x == nil {
		return "nil buffer"
	}
	return fmt.Sprintf("buffer of type %T does not belong to the cpu backend", buf)
}

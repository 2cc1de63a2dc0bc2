package backendtest

import (
	"slices"

	"github.com/fanout-gnn/fanout/backend"
)

// testCopyIn: CopyIn copies a range of host memory of UploadHost's into a
// range of the backend's own buffer, F32, I32 and BF16 alike, leaving the
// rest as it was; it does so from another goroutine while a host function
// in op order waits for it, a gather issued after the host function
// reading the copied values (Sync returns: the copy took no lock the
// waiting queue holds); and it refuses another type and ranges outside
// either buffer.
func testCopyIn(e *env) {
	cp, ok := backend.CopierOf(e.be)
	if !ok {
		e.t.Skip("the backend has no HostCopier")
	}
	const n, off, at, m = 300, 17, 40, 211
	host := func(dt backend.DType) (backend.Buffer, []float64) {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(e.rnd.IntN(2000) - 1000)
		}
		var data any
		switch dt {
		case backend.F32:
			data = convertTo[float32](vals)
		case backend.I32:
			data = convertTo[int32](vals)
		default:
			data = bf16Of(vals)
		}
		b, err := backend.UploadHost(e.be, data)
		if err != nil {
			e.t.Fatalf("UploadHost(%v): %v", dt, err)
		}
		return b, vals
	}
	for _, dt := range []backend.DType{backend.F32, backend.I32, backend.BF16} {
		src, vals := host(dt)
		dst := e.alloc(dt, n, -7)
		if err := cp.CopyIn(dst, at, src, off, m); err != nil {
			e.t.Fatalf("CopyIn %v: %v", dt, err)
		}
		want := slices.Repeat([]float64{-7}, n)
		copy(want[at:at+m], vals[off:off+m])
		if got := readAs(e, dst, dt, n); !slices.Equal(got, want) {
			e.t.Errorf("CopyIn %v of %d elements from %d into %d: got %v, want %v", dt, m, off, at, got, want)
		}
		if err := cp.CopyIn(e.alloc(backend.U8, n, 0), 0, src, 0, 1); err == nil {
			e.t.Errorf("CopyIn %v into a U8 buffer: no error", dt)
		}
		for _, r := range [][3]int{{n - m + 1, 0, m}, {0, n - m + 1, m}, {-1, 0, 1}, {0, 0, -1}} {
			if err := cp.CopyIn(dst, r[0], src, r[1], r[2]); err == nil {
				e.t.Errorf("CopyIn %v of %d elements from %d into %d (buffers of %d): no error", dt, r[2], r[1], r[0], n)
			}
		}
	}
	e.copyInBeside(cp)
}

// copyInBeside copies rows from a goroutine while a host function waits
// for it, then gathers them in op order.
func (e *env) copyInBeside(cp backend.HostCopier) {
	hf, ok := e.be.(backend.HostFuncs)
	if !ok {
		return
	}
	const rows, dim = 64, 8
	vals := make([]float32, rows*dim)
	for i := range vals {
		vals[i] = float32(e.rnd.NormFloat64())
	}
	src, err := backend.UploadHost(e.be, vals)
	if err != nil {
		e.t.Fatalf("UploadHost: %v", err)
	}
	dst := e.poison(rows * dim)
	ids := []int32{5, 63, 0, 5, 17}
	out := e.poison(len(ids) * dim)
	started, ready := make(chan struct{}), make(chan struct{})
	var copyErr error
	go func() {
		<-started
		copyErr = cp.CopyIn(dst, 0, src, 0, rows*dim)
		close(ready)
	}()
	hf.HostFunc(func() { close(started); <-ready })
	e.be.Gather(dst, dim, e.upload(ids), e.count(len(ids), len(ids)), out)
	e.sync()
	if copyErr != nil {
		e.t.Fatalf("CopyIn beside a waiting host function: %v", copyErr)
	}
	got := e.readF32(out, len(ids)*dim)
	for i, v := range ids {
		if !slices.Equal(got[i*dim:(i+1)*dim], vals[int(v)*dim:(int(v)+1)*dim]) {
			e.t.Errorf("row %d (vertex %d) gathered after the copy: %v, want %v", i, v, got[i*dim:(i+1)*dim], vals[int(v)*dim:(int(v)+1)*dim])
		}
	}
}

// readAs reads n elements of b (dt) as float64.
func readAs(e *env, b backend.Buffer, dt backend.DType, n int) []float64 {
	out := make([]float64, n)
	switch dt {
	case backend.F32:
		for i, v := range e.readF32(b, n) {
			out[i] = float64(v)
		}
	case backend.I32:
		for i, v := range e.readI32(b, n) {
			out[i] = float64(v)
		}
	default:
		for i, v := range e.readU16(b, n) {
			out[i] = float64(backend.BF16Float(v))
		}
	}
	return out
}

func convertTo[T float32 | int32](vals []float64) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return out
}

// bf16Of is vals as bfloat16 bits (integers below 256 in magnitude are
// exact; larger ones round, and the comparison reads them back rounded).
func bf16Of(vals []float64) []uint16 {
	out := make([]uint16, len(vals))
	for i, v := range vals {
		out[i] = backend.BF16Bits(float32(v))
		vals[i] = float64(backend.BF16Float(out[i]))
	}
	return out
}

package backendtest

import (
	"github.com/fanout-gnn/fanout/backend"
)

// testMemory checks Alloc (zeroed), Upload, View (shared memory), Write,
// Read at offsets, Fill for every dtype, and that Free does not disturb
// other buffers.
func testMemory(e *env) {
	t := e.t
	for _, dt := range []backend.DType{backend.F32, backend.I32, backend.I64, backend.U8} {
		b, err := e.be.Alloc(dt, 37)
		if err != nil {
			t.Fatalf("Alloc(%s, 37): %v", dt, err)
		}
		if b.DType() != dt || b.Len() != 37 {
			t.Errorf("Alloc(%s, 37): got dtype %s, len %d", dt, b.DType(), b.Len())
		}
		checkEqual(t, "Alloc "+dt.String()+" zeroed", readAny(e, dt, b, 37), make([]float64, 37), 0)
		e.be.Fill(b, 3)
		checkEqual(t, "Fill "+dt.String(), readAny(e, dt, b, 37), repeat(3, 37), 0)
		v := e.be.View(b, 5, 10)
		if v.Len() != 10 || v.DType() != dt {
			t.Errorf("View(%s, 5, 10): got dtype %s, len %d", dt, v.DType(), v.Len())
		}
		e.be.Fill(v, 7)
		want := repeat(3, 37)
		for i := 5; i < 15; i++ {
			want[i] = 7
		}
		checkEqual(t, "Fill through View "+dt.String(), readAny(e, dt, b, 37), want, 0)
		e.be.Free(b)
	}

	// Write and Read at offsets, through a view.
	data := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	b := e.upload(data)
	if b.DType() != backend.F32 || b.Len() != 8 {
		t.Fatalf("Upload([]float32 of 8): dtype %s, len %d", b.DType(), b.Len())
	}
	e.be.Write(b, 2, []float32{-1, -2})
	got := make([]float32, 3)
	e.be.Read(got, b, 1)
	e.sync()
	checkEqual(t, "Write then Read", got, []float32{2, -1, -2}, 0)
	v := e.be.View(b, 4, 4)
	e.be.Write(v, 1, []float32{99})
	e.sync()
	checkEqual(t, "Write through View", e.readF32(b, 8), []float32{1, 2, -1, -2, 5, 99, 7, 8}, 0)
	got = make([]float32, 2)
	e.be.Read(got, v, 2)
	e.sync()
	checkEqual(t, "Read through View", got, []float32{7, 8}, 0)

	ids := e.upload([]int32{4, -3, 1 << 30})
	checkEqual(t, "Upload int32", e.readI32(ids, 3), []int32{4, -3, 1 << 30}, 0)
	wide := e.upload([]int64{1 << 40, -2})
	w := make([]int64, 2)
	e.be.Read(w, wide, 0)
	e.sync()
	checkEqual(t, "Upload int64", w, []int64{1 << 40, -2}, 0)
	e.be.Free(ids)
	checkEqual(t, "buffer after freeing another", e.readF32(b, 8), []float32{1, 2, -1, -2, 5, 99, 7, 8}, 0)
}

// testMemoryStats checks InUseBytes and PeakBytes when the backend offers
// them.
func testMemoryStats(e *env) {
	ms, ok := e.be.(backend.MemoryStats)
	if !ok {
		e.t.Skip("backend does not implement backend.MemoryStats")
	}
	base := ms.InUseBytes()
	ms.ResetPeak()
	a := e.alloc(backend.F32, 1000, 0)
	b := e.alloc(backend.I64, 100, 0)
	if got := ms.InUseBytes() - base; got != 4800 {
		e.t.Errorf("InUseBytes grew by %d after 4000+800 bytes of Alloc", got)
	}
	e.be.Free(a)
	if got := ms.InUseBytes() - base; got != 800 {
		e.t.Errorf("InUseBytes is %d above the start after Free, want 800", got)
	}
	if got := ms.PeakBytes() - base; got != 4800 {
		e.t.Errorf("PeakBytes is %d above the start, want 4800", got)
	}
	ms.ResetPeak()
	if ms.PeakBytes() != ms.InUseBytes() {
		e.t.Errorf("after ResetPeak: peak %d, in use %d", ms.PeakBytes(), ms.InUseBytes())
	}
	e.be.Free(b)
}

// readAny reads n elements of any dtype as float64.
func readAny(e *env, dt backend.DType, b backend.Buffer, n int) []float64 {
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
	case backend.I64:
		s := make([]int64, n)
		e.be.Read(s, b, 0)
		e.sync()
		for i, v := range s {
			out[i] = float64(v)
		}
	case backend.U8:
		for i, v := range e.readU8(b, n) {
			out[i] = float64(v)
		}
	}
	return out
}

func repeat(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

package profile

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// Memory management forwards untimed, except Write (a copy the device
// performs in stream order) and Fill (an op). Read also settles the marks
// the device has passed (it waits for pending work).

func (b *Backend) Alloc(dt backend.DType, n int) (backend.Buffer, error) { return b.inner.Alloc(dt, n) }
func (b *Backend) Upload(data any) (backend.Buffer, error)               { return b.inner.Upload(data) }
func (b *Backend) View(buf backend.Buffer, off, n int) backend.Buffer {
	return b.inner.View(buf, off, n)
}
func (b *Backend) Free(buf backend.Buffer)                           { b.inner.Free(buf) }
func (b *Backend) UploadGraph(csr *graph.CSR) (backend.Graph, error) { return b.inner.UploadGraph(csr) }

func (b *Backend) Write(buf backend.Buffer, off int, src any) {
	b.op("Write", func() { b.inner.Write(buf, off, src) })
}

func (b *Backend) Read(dst any, buf backend.Buffer, off int) {
	b.inner.Read(dst, buf, off)
	b.settle()
}

func (b *Backend) Fill(buf backend.Buffer, v float64) {
	b.op("Fill", func() { b.inner.Fill(buf, v) })
}

// The ops of the backend interfaces (Sampling, Dense, Sparse, Attention)
// are in ops_gen.go, generated: each is forwarded between two marks, under
// its method's name. What follows is forwarded as it is.

// HostFunc forwards to the inner backend in op order.
func (b *Backend) HostFunc(fn func()) {
	if h, ok := b.inner.(backend.HostFuncs); ok {
		h.HostFunc(fn)
		return
	}
	fn()
}

// UploadHost forwards to the inner backend (backend.UploadHost).
func (b *Backend) UploadHost(data any) (backend.Buffer, error) {
	return backend.UploadHost(b.inner, data)
}

// MaskGraph forwards to the inner backend: it is not an op.
func (b *Backend) MaskGraph(g backend.Graph, skip backend.Buffer) (backend.Graph, error) {
	h, err := backend.HotRowsOf(b.inner)
	if err != nil {
		return nil, err
	}
	return h.MaskGraph(g, skip)
}

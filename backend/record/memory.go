package record

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/graph"
)

// Alloc forwards; during a capture it fails.
func (b *Backend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	if err := b.refuse("Alloc"); err != nil {
		return nil, err
	}
	return b.inner.Alloc(dt, n)
}

// Upload forwards; during a capture it fails.
func (b *Backend) Upload(data any) (backend.Buffer, error) {
	if err := b.refuse("Upload"); err != nil {
		return nil, err
	}
	return b.inner.Upload(data)
}

// UploadGraph forwards; during a capture it fails.
func (b *Backend) UploadGraph(csr *graph.CSR) (backend.Graph, error) {
	if err := b.refuse("UploadGraph"); err != nil {
		return nil, err
	}
	return b.inner.UploadGraph(csr)
}

// View forwards (it touches no memory, so it is allowed during a capture).
func (b *Backend) View(buf backend.Buffer, off, n int) backend.Buffer {
	return b.inner.View(buf, off, n)
}

// Free forwards; during a capture it is a sticky error and frees nothing.
func (b *Backend) Free(buf backend.Buffer) {
	if b.refuse("Free") == nil {
		b.inner.Free(buf)
	}
}

// Write forwards; during a capture it is a sticky error and writes nothing.
func (b *Backend) Write(buf backend.Buffer, off int, src any) {
	if b.refuse("Write") == nil {
		b.inner.Write(buf, off, src)
	}
}

// Read forwards; during a capture it is a sticky error and leaves dst as it
// was.
func (b *Backend) Read(dst any, buf backend.Buffer, off int) {
	if b.refuse("Read") == nil {
		b.inner.Read(dst, buf, off)
	}
}

// Fill is an op: recorded during a capture.
func (b *Backend) Fill(buf backend.Buffer, v float64) {
	b.do(func() { b.inner.Fill(buf, v) })
}

// UploadHost forwards to the inner backend (backend.UploadHost); not
// allowed during a capture.
func (b *Backend) UploadHost(data any) (backend.Buffer, error) {
	if err := b.refuse("UploadHost"); err != nil {
		return nil, err
	}
	return backend.UploadHost(b.inner, data)
}

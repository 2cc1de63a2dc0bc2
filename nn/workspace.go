package nn

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// workspace allocates scratch buffers and frees them together. The first
// allocation error is kept; later allocations are skipped and return nil.
type workspace struct {
	be   backend.Backend
	bufs []backend.Buffer
	err  error
}

// alloc returns a zeroed buffer of n elements (at least one, so that empty
// envelopes still have a buffer to point at).
func (w *workspace) alloc(what string, dt backend.DType, n int) backend.Buffer {
	if w.err != nil {
		return nil
	}
	b, err := w.be.Alloc(dt, max(n, 1))
	if err != nil {
		w.err = fmt.Errorf("nn: allocating %s (%d x %s): %w", what, n, dt, err)
		return nil
	}
	w.bufs = append(w.bufs, b)
	return b
}

// count is a Count of capacity n whose live value, n, is in a buffer of
// its own (I32 [1]): a width or a number of rows that ops read from
// backend memory.
func (w *workspace) count(what string, n int) backend.Count {
	b := w.alloc(what, backend.I32, 1)
	if b != nil {
		w.be.Write(b, 0, []int32{int32(n)})
	}
	return backend.Count{Buf: b, Cap: n}
}

// iota is a buffer of n I32 holding 0, 1, ..., n-1.
func (w *workspace) iota(what string, n int) backend.Buffer {
	b := w.alloc(what, backend.I32, n)
	if b != nil {
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(i)
		}
		w.be.Write(b, 0, v)
	}
	return b
}

// allocRows is alloc for a buffer used only as a whole matrix with live
// counts, whose rows past the live count nobody reads: the backend may zero
// them in place instead of stashing them (backend.ScratchPadding).
func (w *workspace) allocRows(what string, dt backend.DType, n int) backend.Buffer {
	b := w.alloc(what, dt, n)
	if b != nil {
		backend.ScratchPadding(w.be, b)
	}
	return b
}

// release frees every buffer and resets the error.
func (w *workspace) release() {
	for _, b := range w.bufs {
		w.be.Free(b)
	}
	w.bufs = nil
	w.err = nil
}

// done ends a layer's reservation: it returns the first allocation's
// error, having freed every buffer of the workspace when there is one.
func (w *workspace) done() error {
	err := w.err
	if err != nil {
		w.release()
	}
	return err
}

// rows is the view of the first n rows of a row-major buffer of width dim.
func rows(be backend.Backend, b backend.Buffer, n, dim int) backend.Buffer {
	return be.View(b, 0, n*dim)
}

// bytes is the size of the workspace's buffers.
func (w *workspace) bytes() int64 {
	var n int64
	for _, b := range w.bufs {
		n += int64(b.Len() * b.DType().Size())
	}
	return n
}

// WorkspaceBytes is the backend memory of the model's activations,
// gradients and scratch reserved for the current envelope (parameters and
// Adam moments excluded).
func (m *Model) WorkspaceBytes() int64 {
	n := m.ws.bytes()
	if m.hetero != nil {
		n += m.hetero.ws.bytes()
	}
	for _, ly := range m.layers {
		n += ly.workspace().bytes()
	}
	return n
}

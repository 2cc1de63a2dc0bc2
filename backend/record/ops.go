package record

import "github.com/fanout-gnn/fanout/backend"

// The ops of the backend interfaces (Sampling, Dense, Sparse) and of the
// op capabilities (Attention, HotRows, TieredGather) are in ops_gen.go,
// generated: each runs on the inner backend now, or is
// recorded during a capture with its arguments as given (*Block pointers
// included). The methods below need more than that.

// HostFunc runs fn in op order on the inner backend: recorded during a
// capture (and run at every replay), otherwise run now.
func (b *Backend) HostFunc(fn func()) {
	b.do(func() {
		if h, ok := b.inner.(backend.HostFuncs); ok {
			h.HostFunc(fn)
			return
		}
		fn()
	})
}

// MaskGraph makes the view on the inner backend at once: it is not an op.
func (b *Backend) MaskGraph(g backend.Graph, skip backend.Buffer) (backend.Graph, error) {
	h, err := backend.HotRowsOf(b.inner)
	if err != nil {
		return nil, err
	}
	return h.MaskGraph(g, skip)
}

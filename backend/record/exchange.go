package record

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// The wrapper has backend.Exchanger when the backend inside has it
// (backend.ExchangerOf): the three ops are recorded like any other.
var _ backend.Exchanger = (*Backend)(nil)

// exchange runs op on the inner backend's Exchanger, or fails.
func (b *Backend) exchange(name string, op func(backend.Exchanger)) {
	b.do(func() {
		x := backend.ExchangerOf(b.inner)
		if x == nil {
			b.mu.Lock()
			b.fail(fmt.Errorf("record: %s: %s cannot exchange rows", name, b.inner.Name()))
			b.mu.Unlock()
			return
		}
		op(x)
	})
}

func (b *Backend) ExchangeAsk(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	b.exchange("ExchangeAsk", func(e backend.Exchanger) { e.ExchangeAsk(x, ids, n, out) })
}

func (b *Backend) ExchangeServe(x *backend.Exchange) {
	b.exchange("ExchangeServe", func(e backend.Exchanger) { e.ExchangeServe(x) })
}

func (b *Backend) ExchangeTake(x *backend.Exchange, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	b.exchange("ExchangeTake", func(e backend.Exchanger) { e.ExchangeTake(x, ids, n, out) })
}

package cpu

import "github.com/fanout-gnn/fanout/backend"

// GatherTiered copies rows from the cache tier (slot[v] >= 0) or the host
// tier (host[v]); see backend.Dense. On the CPU both tiers are host memory.
func (b *Backend) GatherTiered(cache, slot, host backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherTiered(cache, slot, host, dim, ids, n, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	rows, idx, hb, ss, cb, st := ck.n, ck.ids, ck.host, ck.slot, ck.cache, ck.stats
	hostRows, cacheRows := hb.Len()/dim, 0
	if cb != nil {
		cacheRows = cb.Len() / dim
	}
	for _, v := range idx[:rows] {
		if v >= 0 && int(v) < hostRows && int(ss[v]) >= cacheRows {
			c.failf("slot[%d] = %d outside the cache of %d rows", v, ss[v], cacheRows)
			return
		}
	}
	var counts [2]int64 // host rows, cached rows
	b.gatherRows(&c, idx[:rows], hostRows, dim, ck.out, nil, func(_ int, v int32) (rowRef, int) {
		if s := ss[v]; s >= 0 {
			return rowOf(cb, int(s), dim), 1
		}
		return rowOf(hb, int(v), dim), 0
	}, counts[:])
	if st != nil && c.ok {
		st[0] += counts[0]
		st[1] += counts[0] + counts[1]
	}
}

// UploadHost is Upload: the CPU's memory is the host's.
func (b *Backend) UploadHost(data any) (backend.Buffer, error) { return b.Upload(data) }

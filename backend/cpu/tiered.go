package cpu

import "github.com/fanout-gnn/fanout/backend"

// GatherTiered copies rows from the cache tier (slot[v] >= 0) or the host
// tier (host[v]); see backend.Dense. On the CPU both tiers are host memory.
func (b *Backend) GatherTiered(cache, slot, host backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c := b.begin("GatherTiered")
	defer c.end()
	c.dim("dim", dim)
	rows, _ := c.count("n", n)
	idx := c.i32("ids", ids, n.Cap)
	hb := c.f32or16("host", host, 0)
	ss := c.i32("slot", slot, 0)
	var cb *buffer
	if !isNil(cache) {
		cb = c.f32or16("cache", cache, 0)
	}
	ob := c.buf("out", out, backend.F32, n.Cap*dim)
	var st []int64
	if !isNil(stats) {
		st = c.i64("stats", stats, 2)
	}
	if !c.ok {
		return
	}
	if c.ok && cb != nil && cb.dt != hb.dt {
		c.failf("cache: dtype %s, the host tier's is %s", cb.dt, hb.dt)
		return
	}
	hostRows, cacheRows := hb.Len()/dim, 0
	if cb != nil {
		cacheRows = cb.Len() / dim
	}
	if len(ss) < hostRows {
		c.failf("slot: %d entries for %d host rows", len(ss), hostRows)
		return
	}
	for _, v := range idx[:rows] {
		if v >= 0 && int(v) < hostRows && int(ss[v]) >= cacheRows {
			c.failf("slot[%d] = %d outside the cache of %d rows", v, ss[v], cacheRows)
			return
		}
	}
	var counts [2]int64 // host rows, cached rows
	b.gatherRows(&c, idx[:rows], hostRows, dim, ob, func(_ int, v int32) (rowRef, int) {
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

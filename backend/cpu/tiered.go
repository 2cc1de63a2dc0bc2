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
	os := c.f32("out", out, n.Cap*dim)
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
	misses := 0
	for i, v := range idx[:rows] {
		if v < 0 || int(v) >= hostRows {
			c.failf("ids[%d] = %d outside the %d rows", i, v, hostRows)
			return
		}
		src, row := hb, int(v)
		if s := ss[v]; s >= 0 {
			if int(s) >= cacheRows {
				c.failf("slot[%d] = %d outside the cache of %d rows", v, s, cacheRows)
				return
			}
			src, row = cb, int(s)
		} else {
			misses++
		}
		if src.dt == backend.BF16 {
			widenRow(os[i*dim:(i+1)*dim], src.u16[row*dim:])
		} else {
			copy(os[i*dim:(i+1)*dim], src.f32[row*dim:(row+1)*dim])
		}
	}
	if st != nil {
		st[0] += int64(misses)
		st[1] += int64(rows)
	}
}

// UploadHost is Upload: the CPU's memory is the host's.
func (b *Backend) UploadHost(data any) (backend.Buffer, error) { return b.Upload(data) }

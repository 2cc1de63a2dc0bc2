package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

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
	b.gatherRows(&c, idx[:rows], hostRows, dim, rowRef{f32: ck.out}, func(_ int, v int32) (rowRef, int) {
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

// GatherTieredMisses copies the host tier's rows of the vertices without a
// cache slot and leaves the others' rows of out alone; see
// backend.TieredGather. It counts as GatherTiered does.
func (b *Backend) GatherTieredMisses(slot, host backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherTieredMisses(slot, host, dim, ids, n, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	hb, ss, st := ck.host, ck.slot, ck.stats
	var counts [2]int64 // host rows, cached rows
	b.gatherRows(&c, ck.ids[:ck.n], hb.Len()/dim, dim, rowRef{f32: ck.out}, func(_ int, v int32) (rowRef, int) {
		if ss[v] >= 0 {
			return rowRef{}, 1 // read in place from the cache
		}
		return rowOf(hb, int(v), dim), 0
	}, counts[:])
	if st != nil && c.ok {
		st[0] += counts[0]
		st[1] += counts[0] + counts[1]
	}
}

// AggregateConcatTiered is AggregateConcat reading source j's row from the
// cache, cache[slot[SrcIDs[j]], :] (F32, or BF16 widened), where that slot
// is >= 0, and from x[j, :] (the gathered miss) otherwise: the same
// additions in the same order as GatherTiered followed by AggregateConcat.
func (b *Backend) AggregateConcatTiered(blk *backend.Block, edgeW, cache, slot, x backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregateConcatTiered(blk, edgeW, cache, slot, x, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	v, cb, ss, ids, xs := ck.blk, ck.cache, ck.slot, ck.blkSrcIDs, ck.x
	cacheRows := 0
	if cb != nil {
		cacheRows = cb.Len() / dim
	}
	for j, id := range ids[:v.nSrc] {
		if id < 0 || int(id) >= len(ss) {
			c.raise(errcode.TieredID, j, int(id), len(ss))
			return
		}
		if s := ss[id]; int(s) >= cacheRows {
			c.failf("slot[%d] = %d outside the cache of %d rows", id, s, cacheRows)
			return
		}
	}
	b.aggregateRows(v, ck.edgeW, nil, dim, ck.out.f32, ck.out.u16, true, func(j int, tmp []float32) []float32 {
		s := int(ss[ids[j]])
		switch {
		case s < 0:
			return xs[j*dim : (j+1)*dim]
		case cb.dt == backend.BF16:
			widenRow(tmp, cb.u16[s*dim:(s+1)*dim])
			return tmp
		}
		return cb.f32[s*dim : (s+1)*dim]
	})
}

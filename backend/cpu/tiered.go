package cpu

import (
	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

// GatherTiered copies rows from the cache tier (slot[v] >= 0), the band
// (slot[v] <= -2) or the host tier (host[v]); see backend.TieredGather. On
// the CPU every tier is host memory.
func (b *Backend) GatherTiered(cache, slot, host, band backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherTiered(cache, slot, host, band, dim, ids, n, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	rows, idx, hb, ss, cb, st := ck.n, ck.ids, ck.host, ck.slot, ck.cache, ck.stats
	hostRows, cacheRows := hb.Len()/dim, 0
	if cb != nil {
		cacheRows = cb.Len() / dim
	}
	if !slotsWithin(&c, idx[:rows], hostRows, ss, cacheRows, ck.band, dim) {
		return
	}
	var counts [2]int64 // host rows, cached rows
	b.gatherRows(&c, idx[:rows], hostRows, dim, rowRef{f32: ck.out}, func(_ int, v int32) (rowRef, int) {
		if s := ss[v]; s >= 0 {
			return rowOf(cb, int(s), dim), 1
		}
		return hostRow(hb, ck.band, v, ss[v], dim), 0
	}, counts[:])
	if st != nil && c.ok {
		st[0] += counts[0]
		st[1] += counts[0] + counts[1]
	}
}

// hostRow is vertex v's row of host memory: the band's row -2 - s when
// its slot s is <= -2, else the host tier's row v.
func hostRow(hb, band *buffer, v, s int32, dim int) rowRef {
	if s <= -2 {
		return rowOf(band, int(-2-s), dim)
	}
	return rowOf(hb, int(v), dim)
}

// slotsWithin fails c where a slot of the ids (those within the table's
// rows; the gather reports the others) names a cache row past cacheRows
// (< 0: not checked, the misses' gather reads no cache row) or a band row
// past band's (nil: no rows).
func slotsWithin(c *call, ids []int32, rows int, ss []int32, cacheRows int, band *buffer, dim int) bool {
	bandRows := 0
	if band != nil {
		bandRows = band.Len() / dim
	}
	for _, v := range ids {
		if v < 0 || int(v) >= rows {
			continue
		}
		switch s := int(ss[v]); {
		case cacheRows >= 0 && s >= cacheRows:
			c.failf("slot[%d] = %d outside the cache of %d rows", v, s, cacheRows)
			return false
		case s <= -2 && -2-s >= bandRows:
			c.failf("slot[%d] = %d outside the band of %d rows", v, s, bandRows)
			return false
		}
	}
	return true
}

// GatherTieredMisses copies the band's or the host tier's rows of the
// vertices without a cache slot and leaves the others' rows of out alone; see
// backend.TieredGather. It counts as GatherTiered does.
func (b *Backend) GatherTieredMisses(slot, host, band backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherTieredMisses(slot, host, band, dim, ids, n, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	hb, ss, st := ck.host, ck.slot, ck.stats
	if !slotsWithin(&c, ck.ids[:ck.n], hb.Len()/dim, ss, -1, ck.band, dim) {
		return
	}
	var counts [2]int64 // host rows, cached rows
	b.gatherRows(&c, ck.ids[:ck.n], hb.Len()/dim, dim, rowRef{f32: ck.out}, func(_ int, v int32) (rowRef, int) {
		if ss[v] >= 0 {
			return rowRef{}, 1 // read in place from the cache
		}
		return hostRow(hb, ck.band, v, ss[v], dim), 0
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

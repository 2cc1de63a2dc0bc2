package cpu

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

// SplitTiers sorts a gather's ids by tier and lists the positions read
// in place and those whose rows the host fetches (see
// backend.TieredGather): in the order of the positions, as the device's
// warps list theirs in some order.
func (b *Backend) SplitTiers(slot, ids backend.Buffer, n backend.Count, stageFrom int, cached, place, placeN, list, listN, stats backend.Buffer) {
	c, ck := b.checkSplitTiers(slot, ids, n, stageFrom, cached, place, placeN, list, listN, stats)
	defer c.end()
	if !c.ok {
		return
	}
	for i, v := range ck.ids[:ck.n] {
		var code int32
		if v < 0 || int(v) >= len(ck.slot) {
			c.raise(errcode.SplitID, i, int(v), len(ck.slot))
		} else {
			code = ck.slot[v]
		}
		if ck.cached != nil {
			ck.cached[i] = max(code, 0)
		}
		inPlace := code <= -2 && int(-2-code) < stageFrom
		switch {
		case inPlace:
			appendEntry(ck.place, ck.placeN, int32(i), code)
		case code == -1:
			appendEntry(ck.list, ck.listN, int32(i), v)
		case code <= -2:
			appendEntry(ck.list, ck.listN, int32(i), code)
		}
	}
	if ck.stats != nil {
		ck.stats[0] += int64(ck.n)
	}
}

// appendEntry appends the entry (i, x) to list at count n[0], which it
// advances; an entry past the list's end is cut, as the device's.
func appendEntry(list, n []int32, i, x int32) {
	if at := int(n[0]); 2*at+1 < len(list) {
		list[2*at], list[2*at+1] = i, x
	}
	n[0]++
}

// awaitHostTimeout is how long AwaitHost waits before it fails.
const awaitHostTimeout = 2 * time.Minute

// AwaitHost waits until flag[0] holds a value of mask, then writes set
// (see backend.TieredGather): the host goroutine that answers runs beside
// the caller, so the wait spins, yielding.
func (b *Backend) AwaitHost(flag backend.Buffer, mask, set int) {
	c, ck := b.checkAwaitHost(flag, mask, set)
	defer c.end()
	if !c.ok {
		return
	}
	word := &ck.flag[0]
	if mask != 0 {
		start := time.Now()
		for {
			v := atomic.LoadInt32(word)
			if v >= 0 && v < 32 && uint32(mask)>>v&1 != 0 {
				break
			}
			if time.Since(start) > awaitHostTimeout {
				c.raise(errcode.AwaitHost, int(v), mask, set)
				return
			}
			runtime.Gosched()
		}
	}
	if set >= 0 {
		atomic.StoreInt32(word, int32(set))
	}
}

// GatherListed copies the rows a SplitTiers list names (see
// backend.TieredGather): entry j's staging row x >= 0 or host tier row
// -2-x into out's row list[2j], in the order of the entries.
func (b *Backend) GatherListed(host, stage backend.Buffer, dim int, list backend.Buffer, m backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherListed(host, stage, dim, list, m, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	rows, hostRows, stageRows := len(ck.out)/dim, ck.host.Len()/dim, ck.stage.Len()/dim
	dst := rowRef{f32: ck.out}
	var counts [2]int64 // staging rows, host tier rows
	for j := range ck.m {
		i, x := ck.list[2*j], ck.list[2*j+1]
		if i < 0 || int(i) >= rows {
			c.raise(errcode.ListedPos, j, int(i), rows)
			return
		}
		switch {
		case x >= 0 && int(x) < stageRows:
			rowOf(ck.stage, int(x), dim).copyTo(dst, int(i), dim)
			counts[0]++
		case x <= -2 && -2-int64(x) < int64(hostRows):
			rowOf(ck.host, int(-2-x), dim).copyTo(dst, int(i), dim)
			counts[1]++
		case x != -1:
			c.raise(errcode.ListedRow, j, int(x), stageRows)
			return
		}
	}
	if ck.stats != nil {
		ck.stats[0] += counts[0]
		ck.stats[1] += counts[1]
	}
}

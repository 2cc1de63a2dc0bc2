package cpu

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

// SplitTiers sorts a gather's ids by tier and lists the positions whose
// rows the host fetches (see backend.TieredGather): in the order of the
// positions, as the device's warps list theirs in some order.
func (b *Backend) SplitTiers(slot, ids backend.Buffer, n backend.Count, stageFrom, hostSkip, stageSkip int, cached, hosted, staged, list, listN backend.Buffer) {
	c, ck := b.checkSplitTiers(slot, ids, n, stageFrom, hostSkip, stageSkip, cached, hosted, staged, list, listN)
	defer c.end()
	if !c.ok {
		return
	}
	at := 0
	if ck.listN != nil {
		at = int(ck.listN[0])
	}
	for i, v := range ck.ids[:ck.n] {
		var code int32
		if v < 0 || int(v) >= len(ck.slot) {
			c.raise(errcode.SplitID, i, int(v), len(ck.slot))
		} else {
			code = ck.slot[v]
		}
		ck.cached[i] = max(code, 0)
		inPlace := code <= -2 && int(-2-code) < stageFrom
		ck.hosted[i] = int32(hostSkip)
		if inPlace {
			ck.hosted[i] = -2 - code
		}
		ck.staged[i] = int32(stageSkip)
		if ck.listN != nil && (code == -1 || (code <= -2 && !inPlace)) {
			x := code
			if code == -1 {
				x = v
			}
			if 2*at+1 < len(ck.list) { // a list not zeroed by the caller is cut, as the device's
				ck.list[2*at], ck.list[2*at+1] = int32(i), x
			}
			at++
		}
	}
	if ck.listN != nil {
		ck.listN[0] = int32(at)
	}
}

// TakeStaged writes the host's answers to a SplitTiers list (see
// backend.TieredGather).
func (b *Backend) TakeStaged(list backend.Buffer, m backend.Count, hosted, staged backend.Buffer) {
	c, ck := b.checkTakeStaged(list, m, hosted, staged)
	defer c.end()
	if !c.ok {
		return
	}
	for j := range ck.m {
		i, x := ck.list[2*j], ck.list[2*j+1]
		if i < 0 || int(i) >= len(ck.staged) {
			c.raise(errcode.StagedPos, j, int(i), len(ck.staged))
			return
		}
		switch {
		case x >= 0:
			ck.staged[i] = x
		case x <= -2:
			ck.hosted[i] = -2 - x
		}
	}
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

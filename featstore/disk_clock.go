package featstore

import (
	"sync/atomic"
	"time"
)

// HostTime is what a disk store's host work took (a host function's, or
// for a gather started ahead the watching goroutine's): how many ran, their
// wall time in all, and of it the placing of the ids before the copies
// and reads begin (the rest is the staging copies and the disk reads;
// where each host tier row has a staging row of its own, the copying
// goroutines place those ids, and Placing is the disk ids').
type HostTime struct {
	Gathers int64
	Total   time.Duration
	Placing time.Duration
}

// hostClock adds up the host work's times; Stats may read it while the
// host works.
type hostClock struct{ gathers, total, placing atomic.Int64 }

func (c *hostClock) add(start, placed, end time.Time) {
	c.gathers.Add(1)
	c.total.Add(int64(end.Sub(start)))
	c.placing.Add(int64(placed.Sub(start)))
}

func (c *hostClock) read() HostTime {
	return HostTime{c.gathers.Load(), time.Duration(c.total.Load()), time.Duration(c.placing.Load())}
}

func (c *hostClock) reset() { c.gathers.Store(0); c.total.Store(0); c.placing.Store(0) }

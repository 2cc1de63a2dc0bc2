package featstore

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A gather started ahead is handed to the host by a word of host memory
// per site (the second word of site.listed), not by a host function: a
// host node of a replayed graph costs 30-43 µs of the device's time
// (BenchmarkHostFuncNode, H200), and two a step were most of what the
// ring of plans added to a step. The device writes the word with
// backend.TieredGather.AwaitHost, which waits for a value first; a
// goroutine of the store's (watch) answers.
const (
	siteIdle   = 0 // landed, or never started: the device may start a gather there
	siteAsked  = 1 // the device has listed a gather's entries (set by the start)
	siteBusy   = 2 // the host is placing them
	sitePlaced = 3 // placed: the Land may take them (and resets the word to siteIdle)
)

// The watching goroutine yields between looks at the words while
// gathers come (within watchSpin of the last), and naps watchNap when
// none has come for that long (between runs, in evaluation). It must not
// nap while they come: a nap of 20 µs takes about 1.1 ms on Linux guests
// (timer slack), more than a step, which would leave the host too little
// of the steps ahead to place a gather.
const (
	watchSpin = 50 * time.Millisecond
	watchNap  = 20 * time.Microsecond
)

// watcher is the goroutine that places the gathers started ahead.
type watcher struct {
	stop, done chan struct{}
}

// watch starts the goroutine that places the ring sites' gathers when
// the device asks (siteAsked), each in turn.
func (d *Disk) watch(s *scratch) *watcher {
	w := &watcher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		last := time.Now()
		for {
			worked := false
			for _, t := range s.sites[1:] {
				if atomic.CompareAndSwapInt32(&t.listed[1], siteAsked, siteBusy) {
					d.place(s, t)
					atomic.StoreInt32(&t.listed[1], sitePlaced)
					worked = true
				}
			}
			if worked {
				last = time.Now()
				continue
			}
			select {
			case <-w.stop:
				return
			default:
			}
			if time.Since(last) < watchSpin {
				runtime.Gosched()
				continue
			}
			time.Sleep(watchNap)
		}
	}()
	return w
}

// end stops the goroutine once the placing it does, if any, is done.
func (w *watcher) end() {
	close(w.stop)
	<-w.done
}

// Package parallel holds the small fork-join helpers and the progress
// reporter shared by the graph builder and the generator.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Threads resolves a requested worker count: n <= 0 means GOMAXPROCS.
func Threads(n int) int {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return max(n, 1)
}

// Range splits [0, n) into `threads` contiguous parts and runs
// fn(part, lo, hi) for each part on its own goroutine. Part t always covers
// the same range for a given (n, threads); every part runs, empty or not.
func Range(n int64, threads int, fn func(part int, lo, hi int64)) {
	if threads <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for t := range threads {
		lo, hi := n*int64(t)/int64(threads), n*int64(t+1)/int64(threads)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(t, lo, hi)
		}()
	}
	wg.Wait()
}

// Blocks hands out the blocks [0, blocks) dynamically to `threads`
// workers. Use it when blocks cost unequal time; fn must not depend on which
// worker runs a block.
func Blocks(blocks int64, threads int, fn func(block int64)) {
	if threads <= 1 || blocks < 2 {
		for b := range blocks {
			fn(b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(int64(threads), blocks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := next.Add(1) - 1
				if b >= blocks {
					return
				}
				fn(b)
			}
		}()
	}
	wg.Wait()
}

// Progress serializes calls to a user's progress callback; a nil callback
// makes every method a no-op. Workers add finished work with Add.
type Progress struct {
	fn    func(stage string, done, total int64)
	stage string
	total int64
	done  atomic.Int64
	mu    sync.Mutex
}

func NewProgress(fn func(string, int64, int64)) *Progress { return &Progress{fn: fn} }

// Start begins a stage of `total` units and reports 0 done.
func (p *Progress) Start(stage string, total int64) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	p.stage, p.total = stage, total
	p.done.Store(0)
	p.fn(stage, 0, total)
	p.mu.Unlock()
}

// Add records n more units of the current stage as done and reports it.
func (p *Progress) Add(n int64) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	d := p.done.Add(n)
	p.fn(p.stage, min(d, p.total), p.total)
	p.mu.Unlock()
}

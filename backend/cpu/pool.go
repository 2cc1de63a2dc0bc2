package cpu

import (
	"sync"
	"sync/atomic"
)

// pool is a fixed set of worker goroutines. run hands out numbered parts of
// one job to the workers and the caller; which goroutine computes which part
// never changes a result, because parts write disjoint outputs.
type pool struct {
	threads int
	mu      sync.Mutex // one job at a time
	tasks   chan *job  // nil when threads == 1 or after close
	job     job        // reused by every run
}

// job is one call of run: parts [0, parts) of fn, claimed through next.
type job struct {
	fn    func(part int)
	parts int64
	next  atomic.Int64
	wg    sync.WaitGroup
}

func newPool(threads int) *pool {
	p := &pool{threads: threads}
	if threads > 1 {
		p.tasks = make(chan *job, threads-1)
		for range threads - 1 {
			go worker(p.tasks)
		}
	}
	return p
}

func worker(tasks <-chan *job) {
	for j := range tasks {
		j.work()
		j.wg.Done()
	}
}

// work claims and runs parts until none are left.
func (j *job) work() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.parts {
			return
		}
		j.fn(int(i))
	}
}

// run calls fn(i) for every i in [0, parts) and returns when all are done.
func (p *pool) run(parts int, fn func(part int)) {
	if parts <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	helpers := min(p.threads, parts) - 1
	if p.tasks == nil || helpers <= 0 {
		for i := range parts {
			fn(i)
		}
		return
	}
	j := &p.job
	j.fn, j.parts = fn, int64(parts)
	j.next.Store(0)
	j.wg.Add(helpers)
	for range helpers {
		p.tasks <- j
	}
	j.work()
	j.wg.Wait()
	j.fn = nil
}

// close stops the workers; later runs execute on the caller only.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tasks != nil {
		close(p.tasks)
		p.tasks = nil
	}
}

// rows splits [0, n) into contiguous chunks of at least grain rows (about
// four per thread, for balance) and runs fn(lo, hi) on each.
func (b *Backend) rows(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunk := max(grain, (n+4*b.threads-1)/(4*b.threads))
	parts := (n + chunk - 1) / chunk
	if parts == 1 || b.threads == 1 {
		fn(0, n)
		return
	}
	b.pool.run(parts, func(i int) {
		fn(i*chunk, min(n, (i+1)*chunk))
	})
}

// cols splits [0, dim) into one contiguous range per thread (at least grain
// columns each) and runs fn(lo, hi) on each; used where every thread must
// visit all rows in order (scatters, column sums).
func (b *Backend) cols(dim, grain int, fn func(lo, hi int)) {
	if dim <= 0 {
		return
	}
	grain = max(grain, 1)
	parts := min(b.threads, (dim+grain-1)/grain)
	if parts <= 1 {
		fn(0, dim)
		return
	}
	chunk := (dim + parts - 1) / parts
	b.pool.run(parts, func(i int) {
		lo := i * chunk
		if lo < dim {
			fn(lo, min(dim, lo+chunk))
		}
	})
}

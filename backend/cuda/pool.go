package cuda

import (
	"fmt"
	"math/bits"
	"sort"
	"unsafe"
)

// pool is a caching allocator of device memory. Requests are rounded up to
// a size class (4 classes per power of two below 1 MiB, 8 up to 256 MiB,
// then multiples of 2 MiB); a freed block goes to its class's free list and
// is reused by the next request of that class. Every block's work is
// ordered on the backend's single stream, so a block can be handed out again
// as soon as the host frees it. When the driver runs out of memory the pool
// returns all cached blocks to the driver and tries once more.
type pool struct {
	d      *driver
	free   map[int64][]uintptr // class -> cached blocks
	live   map[uintptr]int64   // every block held from the driver -> class
	cached int64               // bytes in free lists

	reserved     int64 // bytes held from the driver (live + cached)
	inUse        int64 // requested bytes of buffers made by Alloc, Upload, UploadGraph
	peak         int64 // high-water mark of inUse
	driverAllocs int64
}

func newPool(d *driver) *pool {
	return &pool{d: d, free: map[int64][]uintptr{}, live: map[uintptr]int64{}}
}

// sizeClass rounds a request up to its class.
func sizeClass(n int64) int64 {
	const minClass = 512
	if n <= minClass {
		return minClass
	}
	if n > 256<<20 {
		const g = 2 << 20
		return (n + g - 1) / g * g
	}
	e := bits.Len64(uint64(n-1)) - 1 // 2^e < n <= 2^(e+1)
	steps := int64(4)
	if n > 1<<20 {
		steps = 8
	}
	step := (int64(1) << e) / steps
	return (n + step - 1) / step * step
}

// get returns a block of at least n bytes and its class.
func (p *pool) get(n int64) (uintptr, int64, error) {
	c := sizeClass(n)
	if l := p.free[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.cached -= c
		return ptr, c, nil
	}
	ptr, err := p.driverAlloc(c)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Code == cudaErrorOutOfMemory && p.cached > 0 {
			if terr := p.trim(); terr != nil {
				return 0, 0, terr
			}
			ptr, err = p.driverAlloc(c)
		}
		if err != nil {
			return 0, 0, p.oomError(n, c, err)
		}
	}
	return ptr, c, nil
}

func (p *pool) driverAlloc(c int64) (uintptr, error) {
	var ptr uintptr
	if err := p.d.call("cuMemAlloc_v2", p.d.cuMemAlloc, uintptr(unsafe.Pointer(&ptr)), uintptr(c)); err != nil {
		return 0, err
	}
	p.live[ptr] = c
	p.reserved += c
	p.driverAllocs++
	return ptr, nil
}

// oomError describes a failed allocation with the sizes involved.
func (p *pool) oomError(n, c int64, cause error) error {
	free, total, ierr := p.d.memInfo()
	dev := "device memory unknown"
	if ierr == nil {
		dev = fmt.Sprintf("%s free of %s on the device", fmtBytes(free), fmtBytes(total))
	}
	return fmt.Errorf("cuda: out of memory allocating %s (%d bytes): %s in use by buffers, %s held by the pool, %s: %w",
		fmtBytes(n), n, fmtBytes(p.inUse), fmtBytes(p.reserved), dev, cause)
}

// put returns a block to its class's free list.
func (p *pool) put(ptr uintptr, c int64) {
	p.free[c] = append(p.free[c], ptr)
	p.cached += c
}

// trim gives every cached block back to the driver.
func (p *pool) trim() error {
	classes := make([]int64, 0, len(p.free))
	for c := range p.free {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool { return classes[i] < classes[j] })
	var first error
	for _, c := range classes {
		for _, ptr := range p.free[c] {
			if err := p.d.call("cuMemFree_v2", p.d.cuMemFree, ptr); err != nil && first == nil {
				first = err
			}
			delete(p.live, ptr)
			p.reserved -= c
		}
		delete(p.free, c)
	}
	p.cached = 0
	return first
}

// releaseAll frees every block, cached or live (at Close).
func (p *pool) releaseAll() error {
	var first error
	for ptr := range p.live {
		if err := p.d.call("cuMemFree_v2", p.d.cuMemFree, ptr); err != nil && first == nil {
			first = err
		}
	}
	p.live = map[uintptr]int64{}
	p.free = map[int64][]uintptr{}
	p.cached, p.reserved = 0, 0
	return first
}

// account adds delta requested bytes to the in-use figure.
func (p *pool) account(delta int64) {
	p.inUse += delta
	if p.inUse > p.peak {
		p.peak = p.inUse
	}
}

// fmtBytes formats a byte count with a binary unit.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

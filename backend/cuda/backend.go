package cuda

import (
	"fmt"
	"regexp"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/fanout-gnn/fanout/backend"
)

// Options configures New and Available.
type Options struct {
	Device   int    // device ordinal (cuda:N)
	LibDir   string // directory searched first for libcuda, libnvrtc and libcublas
	CacheDir string // compiled-kernel cache; "" = os.UserCacheDir()/fanout/kernels
	NoCache  bool   // compile kernels at every start, write no cache
	TF32     bool   // let cuBLAS use TF32 tensor cores for float32 GEMMs
	// TF32x3 runs the Linear ops' products on tensor cores with each input
	// split into two TF32 parts (3xTF32, gemm_tc.go): about float32's
	// accuracy, products of any capacity summed in the same order. Shapes
	// the kernels do not take use cuBLAS (in TF32 mode when TF32 is set).
	TF32x3 bool
	// CapacityGemm makes the Linear ops multiply the whole capacity on the
	// device (no host sync), as they always do while a graph is captured,
	// instead of reading the live row count back to the host (one host sync
	// per call) and multiplying only live rows. It pays off when capacities
	// are close to the live counts.
	CapacityGemm bool
	// Deterministic makes AggregateBackward sort the edges by source and
	// gather (no float atomics), so that its results, and training runs,
	// are bitwise reproducible; it costs some time (see aggregate_det.go).
	// The bias gradient's row chunks then no longer depend on capacity up to
	// 4M rows. Eager and replayed runs are bitwise equal only when their
	// matrix products have the same shapes (CapacityGemm and the same
	// capacities): cuBLAS may sum in a different order for other shapes.
	Deterministic bool
}

// Stats counts what the backend asked of the device since New or the last
// ResetStats.
type Stats struct {
	Launches               int64 // kernel launches (cuBLAS calls are counted in Gemms)
	Gemms                  int64 // cuBLAS SGEMM calls
	HostSyncs              int64 // times the host waited for the device (Read, Sync, count reads)
	Memsets                int64 // memset operations
	CaptureAllocs          int64 // scratch blocks allocated while capturing (0 after a warm-up step)
	CopiesHtoD, CopiesDtoH int64
	BytesHtoD, BytesDtoH   int64
}

// Backend is one CUDA device. See the package comment for threading and
// ordering rules.
type Backend struct {
	mu  sync.Mutex
	opt Options
	// registered are the live allocations of caller memory registered in
	// place (UploadHost): Close unregisters those still live, since the
	// primary context outlives the backend and the memory is the caller's.
	registered map[*allocation]struct{}
	drv        *driver
	rtc        *NVRTC
	blas       *cublas
	dev        deviceInfo

	ctx, stream uintptr
	modules     []uintptr
	fns         map[string]uintptr
	smemSet     map[uintptr]int     // dynamic shared memory limit raised per function
	resident    map[residentKey]int // blocks a multiprocessor holds at once, per kernel and launch shape
	target      string              // what the kernels were built as, e.g. "sm_90 cubin"
	cachedKern  int                 // kernel files read from the disk cache

	pool       *pool
	scratch    [2][numScratch]scratchBuf // per queue: the stream's, then the second queue's (beside.go)
	retired    []scratchBuf              // replaced scratch still used by a graph (see capture.go)
	graphRefs  map[uintptr]int           // scratch block -> live graphs that use it
	capScratch map[uintptr]bool          // scratch blocks used by the capture in progress
	events     []uintptr                 // CUDA events of closed marks, for reuse
	errDev     uintptr                   // device int32[4]: first error detected by a kernel
	host       uintptr                   // pinned host page: error record copy and count staging
	pack       *argPack                  // kernel arguments of the launch being issued
	pin        runtime.Pinner
	gemmSc     *gemmArgs   // alpha and beta of the SGEMM being issued
	pads       []padRegion // stashed padding rows of capacity GEMMs, not yet put back (pad.go)
	adamQ      adamQueue   // Adam updates not yet launched (adam.go)
	flagQ      flagQueue   // FlagOverflow checks not yet launched (steps.go)
	meanQ      meanQueue   // a MeanWeights call not yet launched (sparse.go)
	countQ     countQueue  // an AddCount call not yet launched (adam.go)
	side       sideQueue   // the second stream of backend.Concurrent (beside.go)
	hostFns    *hostFuncs  // host functions in op order, made on first use (hostfunc.go)
	capHostFns []uintptr   // host functions of the capture in progress
	ws         uintptr     // cuBLAS workspace
	wsClass    int64

	err       error // sticky: first failure
	closed    bool
	capturing bool
	stats     Stats
}

// Scratch slots: device memory the backend keeps for its own ops, grown on
// demand and reused (in stream order) by every later op.
const (
	scratchScan = iota
	scratchRelabel
	scratchColsum
	scratchLoss
	scratchPad0 // scratchPad0 + i: the stash of padding region i (pad.go)
	scratchPad1
	scratchPad2
	scratchPad3
	scratchDetAgg // deterministic AggregateBackward's sort (aggregate_det.go)
	scratchWgrad  // partial products of the tensor-core weight gradient (gemm_tc.go)
	scratchWT     // a transposed weight for the tensor-core forward product (gemm_tc.go)
	scratchGAT    // the logits' gradients of the deterministic EdgeSoftmaxBackward (gat.go)
	scratchCSC    // TransposeBlock's per-source counts (transpose.go)
	scratchLink   // BuildExclusion's keys (exclude.go) and GroupRows's counts (link.go)
	scratchNorm   // the normalisation's per-chunk column partials (norm.go)
	scratchAdam   // the ticket of an Adam launch that advances its step (adam.go)
	scratchHeads  // HeadLinear's block-diagonal weights under TF32x3 or over bfloat16, its weight gradient's split products or block-diagonal gradient (gat_first*.go)
	numScratch
)

type scratchBuf struct {
	ptr   uintptr
	class int64
}

// Host page layout.
const (
	hostErrOff   = 0  // int32[4] copy of the device error record
	hostCountOff = 64 // int32 staging for count read-backs
	hostPageSize = 4096
)

var _ backend.Backend = (*Backend)(nil)
var _ backend.MemoryStats = (*Backend)(nil)
var _ backend.Closer = (*Backend)(nil)

// Available reports whether a usable CUDA device is present: the device's
// description, or an error of one line that says why not (no driver, no
// device, no NVRTC or cuBLAS). It compiles nothing.
func Available(opt Options) (string, error) {
	drv, err := loadDriver(opt.LibDir)
	if err != nil {
		return "", err
	}
	info, err := drv.initDevice(opt.Device)
	if err != nil {
		return "", err
	}
	rtc, err := LoadNVRTC(opt.LibDir)
	if err != nil {
		return "", err
	}
	if _, err := loadCublas(opt.LibDir); err != nil {
		return "", err
	}
	return describe(info, rtc), nil
}

func describe(info deviceInfo, rtc *NVRTC) string {
	return fmt.Sprintf("cuda:%d %s (sm_%d, %d SMs, %s, driver %d.%d, NVRTC %s)", info.ordinal, info.name,
		info.arch(), info.sms, fmtBytes(info.totalMem), info.driverVer/1000, info.driverVer%1000/10, rtc.Version())
}

// New opens device opt.Device: loads the libraries, compiles (or reads
// from the cache) every kernel, and creates the stream, the cuBLAS handle and
// the memory pool.
func New(opt Options) (*Backend, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	drv, err := loadDriver(opt.LibDir)
	if err != nil {
		return nil, err
	}
	info, err := drv.initDevice(opt.Device)
	if err != nil {
		return nil, err
	}
	rtc, err := LoadNVRTC(opt.LibDir)
	if err != nil {
		return nil, err
	}
	blas, err := loadCublas(opt.LibDir)
	if err != nil {
		return nil, err
	}
	dir := opt.CacheDir
	if dir == "" {
		dir = defaultCacheDir()
	}
	if opt.NoCache {
		dir = ""
	}
	kc := &kernelCache{rtc: rtc, dir: dir}
	images, srcs, err := kc.buildAll(info.arch())
	if err != nil {
		return nil, err
	}
	b := &Backend{opt: opt, drv: drv, rtc: rtc, blas: blas, dev: info, fns: map[string]uintptr{},
		smemSet: map[uintptr]int{}, resident: map[residentKey]int{}, pack: new(argPack), gemmSc: new(gemmArgs), graphRefs: map[uintptr]int{}}
	arch, cubin := rtc.target(info.arch())
	b.target = fmt.Sprintf("compute_%d ptx", arch)
	if cubin {
		b.target = fmt.Sprintf("sm_%d cubin", arch)
	}
	if err := b.open(kc, images, srcs); err != nil {
		b.shutdown()
		return nil, err
	}
	return b, nil
}

// open creates the context, stream, modules, pool and cuBLAS handle.
func (b *Backend) open(kc *kernelCache, images []compiled, srcs []Source) error {
	d := b.drv
	if err := d.call("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&b.ctx)), uintptr(b.dev.handle)); err != nil {
		return err
	}
	if err := d.call("cuCtxSetCurrent", d.cuCtxSetCurrent, b.ctx); err != nil {
		return err
	}
	if err := d.call("cuStreamCreate", d.cuStreamCreate, uintptr(unsafe.Pointer(&b.stream)), streamNonBlocking); err != nil {
		return err
	}
	for i := range images {
		if err := b.loadModule(kc, images[i], srcs[i]); err != nil {
			return err
		}
	}
	b.pool = newPool(d)
	var err error
	if b.errDev, _, err = b.pool.get(16); err != nil {
		return err
	}
	if err := d.call("cuMemsetD32Async", d.cuMemsetD32Async, b.errDev, 0, 4, b.stream); err != nil {
		return err
	}
	if err := d.call("cuMemHostAlloc", d.cuMemHostAlloc, uintptr(unsafe.Pointer(&b.host)), hostPageSize, memHostAllocPortable); err != nil {
		return err
	}
	if b.ws, b.wsClass, err = b.pool.get(cublasWorkspaceBytes); err != nil {
		return err
	}
	if err := b.blas.init(b.stream, b.ws, cublasWorkspaceBytes, b.opt.TF32); err != nil {
		return err
	}
	return d.call("cuStreamSynchronize", d.cuStreamSynchronize, b.stream)
}

var kernelName = regexp.MustCompile(`extern "C" __global__ void(?:\s+__launch_bounds__\([^)]*\))?\s+(\w+)\s*\(`)

// kernelNames are the names of the kernels code declares plainly: not a
// macro's, whose pasted names (name##P) the scan cannot read (with launch
// bounds it would take __launch_bounds__ for the name).
func kernelNames(code string) []string {
	var names []string
	for _, m := range kernelName.FindAllStringSubmatch(code, -1) {
		if m[1] != "__launch_bounds__" {
			names = append(names, m[1])
		}
	}
	return names
}

// kernel is the function of a loaded kernel. Names the source scan found
// are looked up when their module loads; others (kernels a macro defines)
// are looked up in every module at first use and remembered.
func (b *Backend) kernel(name string) (uintptr, bool) {
	if fn, ok := b.fns[name]; ok {
		return fn, true
	}
	cname := cString(name)
	for _, mod := range b.modules {
		var fn uintptr
		r, _, _ := purego.SyscallN(b.drv.cuModuleGetFunction, uintptr(unsafe.Pointer(&fn)), mod, uintptr(unsafe.Pointer(&cname[0])))
		if int32(r) == cudaSuccess {
			b.fns[name] = fn
			return fn, true
		}
	}
	return 0, false
}

// loadModule loads one compiled file and looks up its kernels. A cached
// image the driver rejects is rebuilt once.
func (b *Backend) loadModule(kc *kernelCache, img compiled, src Source) error {
	d := b.drv
	var mod uintptr
	err := d.call("cuModuleLoadData", d.cuModuleLoadData, uintptr(unsafe.Pointer(&mod)), uintptr(unsafe.Pointer(&img.image[0])))
	if err != nil && img.cached {
		kc.forget(src, b.dev.arch())
		if img, err = kc.build(src, b.dev.arch()); err != nil {
			return err
		}
		err = d.call("cuModuleLoadData", d.cuModuleLoadData, uintptr(unsafe.Pointer(&mod)), uintptr(unsafe.Pointer(&img.image[0])))
	}
	if err != nil {
		return fmt.Errorf("loading kernels %s (%s): %w", src.Name, b.target, err)
	}
	if img.cached {
		b.cachedKern++
	}
	b.modules = append(b.modules, mod)
	for _, k := range kernelNames(src.Code) {
		var fn uintptr
		name := cString(k)
		if err := d.call("cuModuleGetFunction", d.cuModuleGetFunction, uintptr(unsafe.Pointer(&fn)), mod, uintptr(unsafe.Pointer(&name[0]))); err != nil {
			return fmt.Errorf("kernel %s in %s: %w", k, src.Name, err)
		}
		b.fns[k] = fn
	}
	return nil
}

// Name describes the device.
func (b *Backend) Name() string { return describe(b.dev, b.rtc) }

// Target says what the kernels were built as, e.g. "sm_90 cubin", and how
// many kernel files came from the disk cache.
func (b *Backend) Target() (target string, cachedFiles int) { return b.target, b.cachedKern }

// Stats returns the counters.
func (b *Backend) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// ResetStats zeroes the counters.
func (b *Backend) ResetStats() {
	b.mu.Lock()
	b.stats = Stats{}
	b.mu.Unlock()
}

// InUseBytes is the size of live buffers made by Alloc, Upload and
// UploadGraph (as requested, before rounding to size classes).
func (b *Backend) InUseBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pool == nil {
		return 0
	}
	return b.pool.inUse
}

// PeakBytes is the high-water mark of InUseBytes.
func (b *Backend) PeakBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pool == nil {
		return 0
	}
	return b.pool.peak
}

// ResetPeak sets PeakBytes to InUseBytes.
func (b *Backend) ResetPeak() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pool != nil {
		b.pool.peak = b.pool.inUse
	}
}

// ReservedBytes is the device memory the pool holds from the driver: live
// buffers rounded to their size classes, cached free blocks, the backend's
// scratch and cuBLAS's workspace.
func (b *Backend) ReservedBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pool == nil {
		return 0
	}
	return b.pool.reserved
}

// Close waits for the device, then releases every buffer, the modules,
// the stream, the cuBLAS handle and the context. The backend is unusable
// afterwards.
func (b *Backend) Close() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	d := b.drv
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(d.call("cuCtxSetCurrent", d.cuCtxSetCurrent, b.ctx))
	keep(d.call("cuStreamSynchronize", d.cuStreamSynchronize, b.stream))
	b.shutdown()
	return first
}

// shutdown releases whatever open created (the context must be current).
func (b *Backend) shutdown() {
	d := b.drv
	b.closed = true
	if b.blas != nil && b.blas.handle != 0 {
		b.blas.call("cublasDestroy_v2", b.blas.destroy, b.blas.handle)
		b.blas.handle = 0
	}
	for _, ev := range b.events {
		d.call("cuEventDestroy_v2", d.cuEventDestroy, ev)
	}
	b.events = nil
	if b.pool != nil {
		b.pool.releaseAll()
	}
	for a := range b.registered {
		d.call("cuMemHostUnregister", d.cuMemHostUnregister, a.hostPtr)
		a.freed, a.data = true, nil
	}
	b.registered = nil
	if b.host != 0 {
		d.call("cuMemFreeHost", d.cuMemFreeHost, b.host)
		b.host = 0
	}
	for _, m := range b.modules {
		d.call("cuModuleUnload", d.cuModuleUnload, m)
	}
	b.modules = nil
	b.releaseSide()
	if b.stream != 0 {
		d.call("cuStreamDestroy_v2", d.cuStreamDestroy, b.stream)
		b.stream = 0
	}
	if b.ctx != 0 {
		d.call("cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease, uintptr(b.dev.handle))
		b.ctx = 0
	}
}

// hostInt32 reads int32 i of the pinned host page at byte offset off.
func (b *Backend) hostInt32(off, i int) int32 {
	return *(*int32)(unsafe.Add(unsafe.Pointer(nil), b.host+uintptr(off+4*i)))
}

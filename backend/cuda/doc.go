// Package cuda is the GPU backend: it implements backend.Backend on one
// NVIDIA GPU through the CUDA driver API, NVRTC and cuBLAS, loaded at run time
// with purego, so that a CGO_ENABLED=0 binary carries GPU support without
// needing CUDA to build.
//
// Libraries. libcuda.so.1 (driver), NVRTC (libnvrtc.so.13, .12, .11.2, then
// libnvrtc.so) and cuBLAS (libcublas.so.13, .12, .11, then libcublas.so) are
// opened by soname, first from Options.LibDir when set, then through the
// dynamic loader's search path, then from a few well-known CUDA install
// directories. A missing library is an error that says which one and where it
// was looked for ("no GPU"), never a crash.
//
// Threads. A CUDA context is current per OS thread. Every public method locks
// its goroutine to its OS thread, takes the backend's mutex and makes the
// device's primary context current before it calls the driver, and undoes
// both on return. Callers may therefore use a Backend from any goroutine (one
// call at a time is enforced by the mutex); no goroutine is dedicated to the
// device, so an op costs no channel hand-off.
//
// Streams and order. All work goes to one stream in issue order, so buffer
// reuse through the memory pool is safe without extra synchronisation. Ops
// are asynchronous; Read and Sync wait for the stream. Errors are sticky (see
// package backend): the first failed call is kept and returned by Sync.
//
// Kernels. The kernels are CUDA C++ files embedded from kernels/*.cu,
// compiled by NVRTC when a backend is opened (all files in parallel) for
// the device's compute capability (cubin when NVRTC knows the architecture,
// PTX for the newest it knows otherwise) and cached on disk under
// Options.CacheDir keyed by a hash of the sources, architecture, flags and
// NVRTC version. Every kernel reads its live count from device memory and is
// launched for the static capacity, so no op but the eager Linear ops (below)
// needs a size on the host.
//
// Dynamic sizes and cuBLAS. cuBLAS needs its sizes on the host. In eager
// use the Linear ops read the live row count back (one host sync each,
// counted in Stats) and multiply only live rows. While a graph is captured,
// or with Options.CapacityGemm, they run SGEMM over the whole capacity and
// make it look as if only live rows were multiplied: the padding rows of the
// output are stashed and restored around the GEMM, and for the weight
// gradient (a sum over rows) the padding rows of both inputs are stashed,
// zeroed and restored (see pad.go). The capacity path wastes work in
// proportion to capacity over live rows, so it suits tight envelopes.
//
// Deferred launches. Some work is queued and launched together, before any
// other op, copy, read, sync, free, mark or the end of a capture, so that
// results equal launching each call in order: padding restores of the
// capacity path (consecutive Linear ops over the same matrices share one
// stash), Adam calls in a row (one launch for up to 16 parameters) and
// FlagOverflow calls in a row (one launch). A device timer therefore sees
// queued work at the next op's mark.
//
// Replay. *Backend implements backend.Capturer with CUDA graphs and
// backend.Timer with CUDA events (capture.go). Every op reads its live
// sizes, the clock and the overflow flag from device memory, so a captured
// step replays unchanged; while capturing, no op syncs with the host. Ops
// that use scratch memory grow it on first use: run a step once eagerly,
// with CapacityGemm and the capacities of the capture, before capturing, so
// that the capture allocates nothing (Stats.CaptureAllocs counts what it
// did allocate). Scratch used by a live graph is never handed out again.
//
// Determinism. Sampling, relabelling, gathering, the forward aggregation,
// dropout, the loss and its reductions (column sums, the mean loss) are
// bitwise deterministic. AggregateBackward by default scatters with float
// atomics (16-byte vector reductions on sm_90) and is not bitwise
// deterministic: results vary in the last bits between runs. With
// Options.Deterministic it sorts the edges by source (a stable radix sort on
// the device) and gathers each source row's terms in edge order
// (aggregate_det.go), so that a whole training run is bitwise reproducible.
// Eager and replayed runs then agree bitwise when their matrix products have
// the same shapes (CapacityGemm and equal capacities).
//
// Memory. Buffers come from a caching pool with size classes; Free returns a
// block to the pool, and the pool gives cached blocks back to the driver when
// an allocation would otherwise fail. Running out of memory is an error that
// gives the requested size, the bytes in use and the bytes free on the device.
package cuda

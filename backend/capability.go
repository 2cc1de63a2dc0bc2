package backend

import "time"

// MemoryStats is implemented by backends that track their memory use.
// Fallback when absent: memory figures are not reported.
type MemoryStats interface {
	// InUseBytes and PeakBytes count buffers made by Alloc and Upload.
	InUseBytes() int64
	PeakBytes() int64
	ResetPeak()
}

// Closer is implemented by backends that hold resources (device contexts,
// libraries). Fallback when absent: nothing to release.
type Closer interface {
	Close() error
}

// Capturer is implemented by backends that can record a sequence of ops
// once and replay it (CUDA graphs; the record package for any backend).
// Between BeginCapture and EndCapture ops are recorded, not run; Alloc,
// Upload, Write, Read and Sync are not allowed. Ops must read every runtime
// size from backend memory, since the recorded arguments are replayed as
// they were. Fallback when absent: the eager driver.
type Capturer interface {
	BeginCapture() error
	EndCapture() (Replay, error)
}

// Replay is a captured sequence of ops.
type Replay interface {
	// Launch enqueues one replay; errors are sticky, as for ops.
	Launch()
	// Close releases the captured sequence.
	Close() error
}

// Timer is implemented by backends that can time their own work in order
// (device events on CUDA). Fallback when absent: host clocks around Sync.
type Timer interface {
	// Mark enqueues a time stamp after the work issued so far.
	Mark() (Mark, error)
}

// Mark is a time stamp enqueued by Timer.Mark.
type Mark interface {
	// Since is the device time from an earlier mark to this one; it waits
	// for this mark to be reached.
	Since(earlier Mark) (time.Duration, error)
	Close()
}

// MemoryOf is be's MemoryStats, or, when it has none, one that reports zero
// bytes and ignores ResetPeak. Wrapping backends forward through it.
func MemoryOf(be Backend) MemoryStats {
	if m, ok := be.(MemoryStats); ok {
		return m
	}
	return noMemoryStats{}
}

type noMemoryStats struct{}

func (noMemoryStats) InUseBytes() int64 { return 0 }
func (noMemoryStats) PeakBytes() int64  { return 0 }
func (noMemoryStats) ResetPeak()        {}

// Collective is one rank's handle on a group of backends that train
// together: the GPUs of one host (NCCL), CPU devices in one process (an
// in-process reduction), or processes on several hosts. Its ops are issued
// on the rank's own backend like any other op: asynchronous, in that
// backend's order, and captured with the step where the backend captures.
// Every rank must issue the same collective ops in the same order.
type Collective interface {
	Rank() int // 0-based
	Size() int // number of ranks
	// AllReduceSum replaces the F32 buffer buf, on every rank, with the
	// element-wise sum of buf over all ranks.
	AllReduceSum(buf Buffer)
	// AllReduceMax replaces the I32 buffer buf, on every rank, with the
	// element-wise maximum of buf over all ranks.
	AllReduceMax(buf Buffer)
	// Close releases the communicator.
	Close() error
}

// HostMapper is implemented by backends whose ops can read host memory in
// place (CUDA: pinned memory mapped into the device's address space, read
// over PCIe). A buffer it returns does not count as backend memory in
// MemoryStats. Without it, UploadHost falls back to Upload.
type HostMapper interface {
	UploadHost(data any) (Buffer, error)
}

// UploadHost makes data readable by be's ops from host memory when be can,
// and uploads it otherwise.
func UploadHost(be Backend, data any) (Buffer, error) {
	if h, ok := be.(HostMapper); ok {
		return h.UploadHost(data)
	}
	return be.Upload(data)
}

// HostFuncs is implemented by backends that can run a host function in the
// order of their ops: the CPU backend runs it at once, the record wrapper
// stores it in a capture in progress and runs it at every replay. An
// in-process collective uses it so that a reduction is one more op of the
// step.
type HostFuncs interface {
	HostFunc(fn func())
}

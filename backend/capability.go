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

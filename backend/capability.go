package backend

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

//go:build !linux

package featstore

// adviseHuge does nothing where the kernel has no madvise hint for huge
// pages.
func adviseHuge(rows any) {}

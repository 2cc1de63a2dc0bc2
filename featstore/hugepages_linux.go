package featstore

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back rows (made by newRows, not yet
// written) with 2 MiB pages where it can: the host's cores copy a step's
// random rows of the host tier into the staging (DiskConfig.StageHost),
// and each row of a table of 4 KiB pages is a miss of the address
// translation's cache besides the row's own: on the H200 machine (16
// cores) such copies ran 2.2x as fast by one goroutine on 2 MiB pages and
// 1.25x by sixteen (docs/perf.md; BenchmarkHostRowCopy measures it). Best
// effort: an error, or a kernel without transparent huge pages, leaves
// the pages as they are.
func adviseHuge(rows any) {
	const page, huge = 4096, 2 << 20
	n := int(valuesBytes(rows))
	if n < huge {
		return
	}
	var p unsafe.Pointer
	switch r := rows.(type) {
	case []uint16:
		p = unsafe.Pointer(&r[0])
	case []float32:
		p = unsafe.Pointer(&r[0])
	}
	off := int((page - uintptr(p)%page) % page) // madvise wants a page-aligned start
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, off)), n-off), syscall.MADV_HUGEPAGE)
}

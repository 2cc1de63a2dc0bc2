package cuda

import (
	"fmt"
	"unsafe"

	"github.com/fanout-gnn/fanout/backend"
)

// memHostAllocDeviceMap maps pinned host memory into the device's address
// space (CU_MEMHOSTALLOC_DEVICEMAP).
const memHostAllocDeviceMap = 0x02

// UploadHost makes data readable by kernels in place over PCIe
// (zero-copy): it registers data's own memory with the driver (pinned and
// mapped into the device's address space; read-only memory, such as a
// memory-mapped dataset, too), so a table larger than half the host's
// memory needs no second copy; where registering fails it copies data into
// pinned mapped memory. The caller must not modify data afterwards. It does
// not count as device memory in InUseBytes.
func (b *Backend) UploadHost(data any) (backend.Buffer, error) {
	c := b.beginAlways("UploadHost")
	defer c.end()
	if b.closed {
		return nil, fmt.Errorf("cuda: UploadHost: %w", errClosed)
	}
	if b.capturing {
		return nil, fmt.Errorf("cuda: UploadHost: cannot allocate while capturing a graph")
	}
	p, n, dt, ok := hostSlice(data)
	if !ok {
		return nil, fmt.Errorf("cuda: UploadHost: unsupported type %T", data)
	}
	x := &buffer{dt: dt, n: n, owner: b}
	if n == 0 {
		return x, nil
	}
	bytes := int64(n) * int64(dt.Size())
	if root, ok := b.register(p, bytes, data); ok {
		x.ptr, x.root = root.ptr, root
		return x, nil
	}
	var hp, dp uintptr
	if err := b.drv.call("cuMemHostAlloc", b.drv.cuMemHostAlloc, uintptr(unsafe.Pointer(&hp)), uintptr(bytes), memHostAllocPortable|memHostAllocDeviceMap); err != nil {
		return nil, fmt.Errorf("cuda: UploadHost: %d MiB of pinned host memory: %w", bytes>>20, err)
	}
	copy(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), hp)), bytes), unsafe.Slice((*byte)(p), bytes))
	if err := b.drv.call("cuMemHostGetDevicePointer_v2", b.drv.cuMemHostGetDevicePointer, uintptr(unsafe.Pointer(&dp)), hp, 0); err != nil {
		b.drv.call("cuMemFreeHost", b.drv.cuMemFreeHost, hp)
		return nil, fmt.Errorf("cuda: UploadHost: %w", err)
	}
	x.ptr = dp
	x.root = &allocation{ptr: dp, bytes: bytes, hostPtr: hp}
	return x, nil
}

// Flags of cuMemHostRegister (cuda.h's CU_MEMHOSTREGISTER_*).
const (
	hostRegisterPortable  = 0x01
	hostRegisterDeviceMap = 0x02
	hostRegisterReadOnly  = 0x08
)

// register pins and maps data's memory in place (writable, else
// read-only); ok is false when the driver refuses both. The caller holds
// the backend's call.
func (b *Backend) register(p unsafe.Pointer, bytes int64, data any) (*allocation, bool) {
	hp := uintptr(p)
	for _, flags := range []uintptr{hostRegisterPortable | hostRegisterDeviceMap, hostRegisterPortable | hostRegisterDeviceMap | hostRegisterReadOnly} {
		if b.drv.call("cuMemHostRegister_v2", b.drv.cuMemHostRegister, hp, uintptr(bytes), flags) != nil {
			continue
		}
		var dp uintptr
		if err := b.drv.call("cuMemHostGetDevicePointer_v2", b.drv.cuMemHostGetDevicePointer, uintptr(unsafe.Pointer(&dp)), hp, 0); err != nil {
			b.drv.call("cuMemHostUnregister", b.drv.cuMemHostUnregister, hp)
			return nil, false
		}
		a := &allocation{ptr: dp, bytes: bytes, hostPtr: hp, registered: true, data: data}
		if b.registered == nil {
			b.registered = map[*allocation]struct{}{}
		}
		b.registered[a] = struct{}{}
		return a, true
	}
	return nil, false
}

// GatherTiered copies F32 rows from the device cache, the band or the host
// tier (see backend.TieredGather); stats (I64 [2], optional) counts host rows and all
// rows on the device. One launch.
func (b *Backend) GatherTiered(cache, slot, host, band backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherTiered(cache, slot, host, band, dim, ids, n, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	kind, words := tieredKernel(dim, ck.host, ck.out, ck.cache, ck.band)
	c.launchTiered(&ck, "tiered_"+kind, words, d1(c.blocks(int64(n.Cap)*int64(words)/4+1, 256)), d1(256), 0)
}

// GatherTieredMisses copies the host tier's or the band's rows of the
// vertices without a cache slot (see backend.TieredGather): GatherTiered's
// kernel without a cache, which counts the cached rows and writes none.
// One launch.
func (b *Backend) GatherTieredMisses(slot, host, band backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherTieredMisses(slot, host, band, dim, ids, n, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	kind, words := tieredKernel(dim, ck.host, ck.out, nil, ck.band)
	c.launchTieredMisses(&ck, "tiered_"+kind, words, d1(c.blocks(int64(n.Cap)*int64(words)/4+1, 256)), d1(256), 0)
}

// tieredKernel picks the kind of the tiered gathers' kernels (tiered_*,
// listed_*) for rows of dim values of the host tier hb (F32 or BF16) and
// its other sources (the cache and the band; nil: none) into out, and the
// row's width in its words: 16-byte words (or four bfloat16 values) where
// dim and every address allow, else one value a word.
func tieredKernel(dim int, hb, out *buffer, others ...*buffer) (string, int) {
	aligned := func(a uintptr) bool {
		if out.ptr%16 != 0 || hb.ptr%a != 0 {
			return false
		}
		for _, o := range others {
			if o != nil && o.ptr%a != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case hb.dt == backend.BF16 && dim%4 == 0 && aligned(8):
		return "bf16x4", dim / 4
	case hb.dt == backend.BF16:
		return "bf16x1", dim
	case dim%4 == 0 && aligned(16):
		return "rows4", dim / 4
	}
	return "rows1", dim
}

// AggregateConcatTiered is AggregateConcat reading source j's row from the
// cache where slot[SrcIDs[j]] >= 0 and from x's row j (the gathered miss)
// otherwise (see backend.TieredGather): the aggregation kernel over a
// tiered row source, and so the same bits as GatherTiered followed by
// AggregateConcat. One launch (the queued MeanWeights folded in, as
// AggregateConcatTable's).
func (b *Backend) AggregateConcatTiered(blk *backend.Block, edgeW, cache, slot, x backend.Buffer, dim int, out backend.Buffer) {
	c, ck := b.checkAggregateConcatTiered(blk, edgeW, cache, slot, x, dim, out)
	defer c.end()
	if !c.ok {
		return
	}
	meanW := c.takeMean(ck.blk, ck.edgeW)
	name, vecs := aggKernel("aggregate_cat_tiered_", dim, ck.cache, ck.x, ck.out)
	g, t := c.warpRows(ck.blk.dstCap)
	c.launchAggregateCatTiered(&ck, name, meanW, vecs, g, t, 0)
}

// MemInfo is the device's free and total memory in bytes, as the driver
// reports them (cuMemGetInfo).
func (b *Backend) MemInfo() (free, total int64, err error) {
	c := b.beginAlways("MemInfo")
	defer c.end()
	return b.drv.memInfo()
}

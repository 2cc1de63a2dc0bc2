package featstore

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// Tiered serves rows from two tiers: a cache in backend memory holding the
// rows gathered most often, and the whole table in host memory that the
// device reads in place (backend.UploadHost: pinned, device-mapped memory
// read over PCIe inside the step; on the CPU backend, the slice itself).
// A slot table maps each vertex to its cache row or to -1. The gather is
// one backend op (GatherTiered) that also counts, on the device, the rows
// read from host memory and all rows, so the hit rate and the bytes that
// crossed PCIe are known without a host read inside the step.
//
// A band (Band) copies the rows ranked after the cache's into host memory
// of their own, in rank order, and their slots name them (-2 - band row):
// the device reads rows that lie within a few hundred MiB of host memory
// at the link's bandwidth, and rows spread over a large table at a
// quarter of it (docs/perf.md), so the misses the ranking expects most are
// read from a compact range.
//
// The cache is sized once, by Fill, before the step is captured: a
// captured gather holds the cache's address. A bottom layer may read the
// cached rows in place instead (InPlace): the step then gathers only the
// misses.
type Tiered struct {
	be    backend.Backend
	ops   backend.TieredGather // be's (checked by NewTiered)
	dim   int
	rows  int64
	host  backend.Buffer // F32 [N, dim], host memory read in place
	slot  backend.Buffer // I32 [N]: cache row of each vertex, -2 - its band row, or -1
	cache backend.Buffer // F32 [cached, dim], nil until Fill
	band  backend.Buffer // [banded, dim] of dt, host memory read in place; nil until Band
	stats backend.Buffer // I64 [2]: rows read from host, all rows
	feat  table          // the host table Fill reads cache rows from
	dt    backend.DType  // F32 or BF16: both tiers hold it
	order []int32        // vertices, most accessed first
	n     int            // rows in the cache
	nb    int            // rows in the band
	ahead bool           // Remote: the replay driver gathers a step's misses in the step before
}

// NewTiered puts the [N, dim] table feat ([]float32, or []uint16
// bfloat16 bits) in host memory the device reads in place, as dt (F32 or
// BF16; 0: as feat is held), with an empty cache; order ranks the vertices
// for Fill (most gathered first; the hybrid driver ranks them by expected reads). feat is kept (not
// copied) for Fill, and is the host tier itself when it is held as dt;
// otherwise the host tier is a converted copy (rounded to bfloat16, or
// widened to float32: 4 bytes a value in host memory). be must have the
// two-tier gather (backend.TieredGather).
func NewTiered(be backend.Backend, feat any, dim int, order []int32, dt backend.DType) (*Tiered, error) {
	ops, err := backend.TieredOf(be)
	if err != nil {
		return nil, fmt.Errorf("featstore: tiered store: %w", err)
	}
	src, err := tableOf(feat, dim)
	if err != nil {
		return nil, err
	}
	if dt != backend.BF16 && dt != backend.F32 {
		dt = src.dt
	}
	t := &Tiered{be: be, ops: ops, dim: dim, rows: src.rows, feat: src, order: order, dt: dt}
	if t.host, err = backend.UploadHost(be, src.as(dt)); err != nil {
		return nil, fmt.Errorf("featstore: host tier of %d x %d features: %w", t.rows, dim, err)
	}
	if t.slot, err = be.Upload(slotTable(t.rows, nil)); err == nil {
		t.stats, err = be.Alloc(backend.I64, 2)
	}
	if err != nil {
		t.Free()
		return nil, fmt.Errorf("featstore: tiered store tables: %w", err)
	}
	return t, nil
}

// Fill moves the first rows vertices of the ranking into a cache in
// backend memory (rows is clipped to the ranking). Call it once, before the
// gather is captured.
func (t *Tiered) Fill(rows int) error {
	if t.cache != nil || t.band != nil {
		return fmt.Errorf("featstore: the cache is filled already (%d rows, %d in the band)", t.n, t.nb)
	}
	rows = min(rows, len(t.order))
	if rows <= 0 {
		return nil
	}
	slot := slotTable(t.rows, t.order[:rows])
	cache, err := t.be.Alloc(t.dt, rows*t.dim)
	if err != nil {
		return fmt.Errorf("featstore: cache of %d rows: %w", rows, err)
	}
	t.feat.writeRows(t.be, cache, rows, func(i int) int64 { return int64(t.order[i]) })
	t.cache, t.n = cache, rows
	t.be.Write(t.slot, 0, slot)
	return t.be.Sync()
}

// Band copies the rows ranked after the cache's, at most rows of them,
// into a band of host memory in rank order (a converted copy when the
// host tier is), which the gathers read them from instead of the host
// tier. Call it once, after Fill and before the gather is captured.
func (t *Tiered) Band(rows int) error {
	if t.band != nil {
		return fmt.Errorf("featstore: the band is filled already (%d rows)", t.nb)
	}
	rows = min(rows, len(t.order)-t.n)
	if rows <= 0 {
		return nil
	}
	ranked := t.order[t.n : t.n+rows]
	band, err := backend.UploadHost(t.be, t.feat.hostRows(t.dt, rows, func(i int) int64 { return int64(ranked[i]) }))
	if err != nil {
		return fmt.Errorf("featstore: band of %d rows in host memory: %w", rows, err)
	}
	t.band, t.nb = band, rows
	slot := slotTable(t.rows, t.order[:t.n])
	for k, v := range ranked {
		slot[v] = int32(-2 - k) // band row k
	}
	t.be.Write(t.slot, 0, slot)
	return t.be.Sync()
}

// BandRows is the number of rows in the band.
func (t *Tiered) BandRows() int { return t.nb }

func (t *Tiered) Dim() int    { return t.dim }
func (t *Tiered) Rows() int64 { return t.rows }

// DType is how both tiers hold the rows (F32 or BF16).
func (t *Tiered) DType() backend.DType { return t.dt }

// CachedRows is the number of rows in the cache.
func (t *Tiered) CachedRows() int { return t.n }

// Table is the host tier: the whole table, readable by ops in place
// (layer-wise inference reads it through PCIe).
func (t *Tiered) Table() backend.Buffer { return t.host }

// Gather issues the two-tier gather, counting host rows on the device.
func (t *Tiered) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	t.ops.GatherTiered(t.cache, t.slot, t.host, t.band, t.dim, ids, n, out, t.stats)
}

// Tiers are the cache (nil until Fill) and the slot table (InPlace).
func (t *Tiered) Tiers() (cache, slot backend.Buffer) { return t.cache, t.slot }

// GatherMisses issues the gather of the rows outside the cache (InPlace),
// counting host rows and all rows on the device as Gather does.
func (t *Tiered) GatherMisses(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	t.ops.GatherTieredMisses(t.slot, t.host, t.band, t.dim, ids, n, out, t.stats)
}

// DeviceBytes counts the cache, the slot table and the counters (the host
// tier is host memory).
func (t *Tiered) DeviceBytes() int64 {
	n := int64(t.rows)*4 + 16
	if t.cache != nil {
		n += int64(t.cache.Len()) * int64(t.dt.Size())
	}
	return n
}

// Stats reads the counters: rows gathered from host memory and all rows
// gathered since the store was made or the counters were reset.
func (t *Tiered) Stats() (hostRows, rows int64, err error) {
	s := make([]int64, 2)
	t.be.Read(s, t.stats, 0)
	return s[0], s[1], t.be.Sync()
}

// ResetStats zeroes the counters.
func (t *Tiered) ResetStats() { t.be.Write(t.stats, 0, []int64{0, 0}) }

// Free releases the tiers, the band and the tables.
func (t *Tiered) Free() {
	for _, b := range []backend.Buffer{t.host, t.slot, t.cache, t.band, t.stats} {
		if b != nil {
			t.be.Free(b)
		}
	}
	t.host, t.slot, t.cache, t.band, t.stats = nil, nil, nil, nil, nil
}

// FetchAhead makes the store Remote (on) or not: the replay driver then
// gathers a step's rows (with InPlace, its host tier's misses) a step
// ahead, beside the step before, into rows of the next plan's own,
// instead of inside the step. Set it before the trainer is made: the plans
// are shaped by it.
func (t *Tiered) FetchAhead(on bool) { t.ahead = on }

// Remote reports whether the replay driver fetches the rows a step ahead
// (FetchAhead).
func (t *Tiered) Remote() bool { return t.ahead }

// slotTable is the slot table of a cache of the rows cached, in their
// order: I32 [rows], a vertex's cache row, or -1.
func slotTable(rows int64, cached []int32) []int32 {
	slot := make([]int32, rows)
	for i := range slot {
		slot[i] = -1
	}
	for s, v := range cached {
		slot[v] = int32(s)
	}
	return slot
}

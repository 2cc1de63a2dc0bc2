package featstore

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/fanout-gnn/fanout/backend"
)

// RowFile reads rows of a feature table kept in a file
// (dataset.FeatureFile): whole rows of RowBytes bytes, little-endian
// values, by positional reads that goroutines may issue at once.
type RowFile interface {
	RowBytes() int64
	ReadRows(p []byte, first int64) error
}

// DiskConfig is the disk tier of a Disk store.
type DiskConfig struct {
	File     RowFile
	FileType backend.DType // how File holds values: F32 or BF16
	// HostRows caps the host tier: the rows after the cache's in the
	// ranking that Fill reads into host memory (0: none).
	HostRows int64
	Readers  int // goroutines that read rows at once; 0: 16
	// Direct reads rows with O_DIRECT, past the page cache (File a
	// DirectFile): each read whole 4 KiB blocks around its rows into an
	// aligned buffer, then copied. Where the file cannot be opened so (a
	// file system that refuses it, as tmpfs does) or a read is refused
	// (EINVAL), the reads go through the page cache, said once on Log.
	Direct bool
	// StageHost copies the host tier's rows a gather needs into the
	// staging too (by the host function, split among goroutines as the
	// placing is), so the device reads every row outside the cache from
	// the contiguous staging, in the order of the ids, instead of the host
	// tier's rows where they lie. The staging then holds a gather's
	// distinct rows outside the cache (Reserve's rows, or the rows outside
	// the cache where fewer), which PlanHost counts. A host tier row is
	// still counted as the host tier's (TierStats).
	StageHost bool
	// InPlaceRows, with StageHost, keeps the host tier's first rows (the
	// ranking's next after the cache, which a step misses most) read in
	// place by the device: only the host tier's rows from InPlaceRows on
	// are staged (the device reads rows within a few hundred MiB about as
	// fast as the host copies them, docs/perf.md).
	InPlaceRows int64
	// Log hears the fall back from Direct; nil: silent.
	Log io.Writer
	// Progress, when set, hears how many of Fill's rows (the cache's and
	// the host tier's) are read.
	Progress func(done, total int64)
}

// Disk serves rows from three tiers: a cache in backend memory (the rows
// ranked first, as Tiered's), a host tier of the rows ranked next in
// host memory the device reads in place (at most DiskConfig.HostRows; or
// that the host function copies into the staging, DiskConfig.StageHost),
// and the rest, read from the file when a gather needs them. A gather
// sorts the step's ids by tier on the device (SplitTiers, from the
// device's slot table of codes: cache row, host tier row, or on disk),
// which writes each position's cache row, lists the positions of the
// host tier's rows read in place in device memory and the positions whose
// rows the host fetches in mapped host memory; the cached rows (Gather;
// none for GatherMisses, InPlace) and the rows read in place are copied
// at once; a host function in op order (backend.HostFuncs) answers only
// the host's entries with staging rows and reads the disk rows with
// positional reads by a pool of goroutines into a pinned staging area of
// the call's own; a last gather copies the rows the answered list names.
// Each list's gather (GatherListed) has a thread a word of its rows only.
// The rows are the same bits Tiered gathers from the whole table.
//
// The gathers share one scratch (the split's lists, the staging), made
// by Fill for gathers of up to Reserve's rows, so at most one gather may
// be in flight: each must have copied its rows out of the staging before
// the next one's host function writes it. In op order that holds by
// itself. Fetched a step ahead (FetchAhead) the replay driver issues a
// step's gather on its second queue, beside the step before; it holds
// there too, because the step itself then gathers nothing (its rows came
// with the gather beside the step before), each replayed step joins its
// second queue before it ends, so the gather beside step k+1 starts after
// the one beside step k has finished, and a run's first gather and the
// evaluation's are issued in order on the main queue, between launches.
// A host function cannot fail its step: a read that failed leaves its
// rows as they were and is reported by Stats and Err, as is a larger
// gather, which writes nothing.
type Disk struct {
	be    backend.Backend
	ops   backend.TieredGather
	hf    backend.HostFuncs
	cfg   DiskConfig
	dim   int
	rows  int64
	dt    backend.DType
	order []int32

	slot      backend.Buffer // I32 [N] device: tier's codes (Fill writes them)
	cache     backend.Buffer // dt [n, dim], nil until Fill
	n         int
	tier      []int32        // [N] host: cache row (>= 0), host tier row p as -2-p, or onDisk
	workers   int            // goroutines that place a gather's ids; 0: GOMAXPROCS
	hostRows  int            // H
	host      backend.Buffer // dt [(H+1)·dim], mapped; row H is never read
	hostData  any
	statsH    backend.Buffer // I64 [3]: 0 (no staging), host tier rows read in place (GatherListed); all rows (SplitTiers)
	statsD    backend.Buffer // I64 [2]: rows from the staging, host tier rows the list named (GatherListed)
	reserve   int            // rows a gather may have (Reserve)
	sc        *scratch       // nil until Fill
	bufs      [][]byte       // a read buffer per reader (readSpan bytes, aligned), cut from slab by Fill
	slab      []byte         // the readers' buffers' memory (readBufBytes)
	dio       *directFile    // the file opened with O_DIRECT; nil: reads through the page cache
	ahead     bool           // Remote: the replay driver gathers a step's rows beside the step before
	lookahead int            // >= 2: gathers started that many steps ahead (Ahead); 0 otherwise
	cur       int            // the site gathers start (AheadSite), -1: whole gathers
	readMu    sync.Mutex     // the readers' buffers: the watching goroutine and a whole gather's host function may read at once
	clock     hostClock      // the host functions' times (HostTime)
	// stagedHost counts the positions whose host tier rows the host
	// functions staged (TierStats counts them as the host tier's).
	stagedHost atomic.Int64

	mu  sync.Mutex
	err error // the first failure of a host function
}

// NewDisk makes a store of rows rows of width dim whose values lie in
// cfg.File, held in the cache and host tier as dt (F32 or BF16; 0: as the
// file holds them); order ranks the vertices for Fill. be must have the
// tiered gather, host functions (backend.HostFuncs) and I32 gathers.
// Reserve, then Fill, before the first gather.
func NewDisk(be backend.Backend, cfg DiskConfig, rows int64, dim int, order []int32, dt backend.DType) (*Disk, error) {
	ops, err := backend.TieredOf(be)
	if err != nil {
		return nil, fmt.Errorf("featstore: disk tier: %w", err)
	}
	hf, ok := be.(backend.HostFuncs)
	if !ok {
		return nil, fmt.Errorf("featstore: disk tier: backend %s cannot run host functions in op order (backend.HostFuncs)", be.Name())
	}
	if cfg.FileType != backend.F32 && cfg.FileType != backend.BF16 {
		return nil, fmt.Errorf("featstore: disk tier: the file's values are %v, want F32 or BF16", cfg.FileType)
	}
	if dim <= 0 || cfg.File.RowBytes() != int64(dim)*int64(cfg.FileType.Size()) {
		return nil, fmt.Errorf("featstore: disk tier: rows of %d bytes in the file, want %d values of %v", cfg.File.RowBytes(), dim, cfg.FileType)
	}
	if dt != backend.BF16 && dt != backend.F32 {
		dt = cfg.FileType
	}
	d := &Disk{be: be, ops: ops, hf: hf, cfg: cfg, dim: dim, rows: rows, dt: dt, order: order, tier: slotTable(rows, nil), cur: -1}
	if d.slot, err = be.Upload(slotTable(rows, nil)); err == nil {
		if d.statsH, err = be.Alloc(backend.I64, 3); err == nil {
			if d.statsD, err = be.Alloc(backend.I64, 2); err == nil {
				err = d.setHost(newRows(dt, 1, dim), 0)
			}
		}
	}
	if err != nil {
		d.Free()
		return nil, fmt.Errorf("featstore: disk tier tables: %w", err)
	}
	if cfg.Direct {
		if d.dio, err = openDirectFile(cfg.File); err != nil {
			d.dio = nil
			if cfg.Log != nil {
				fmt.Fprintf(cfg.Log, "featstore: reading rows through the page cache: %v\n", err)
			}
		}
	}
	return d, nil
}

// Direct reports whether the store reads rows with O_DIRECT (until a read
// is refused).
func (d *Disk) Direct() bool { return d.dio != nil }

// setHost makes data ((h+1) rows of dt, row h never read) the host tier
// of h rows, with its slot table.
func (d *Disk) setHost(data any, h int) error {
	host, err := backend.UploadHost(d.be, data)
	if err != nil {
		return err
	}
	d.freeHost()
	d.host, d.hostData, d.hostRows = host, data, h
	return nil
}

func (d *Disk) freeHost() {
	if d.host != nil {
		d.be.Free(d.host)
	}
	d.host, d.hostData = nil, nil
}

func (d *Disk) Dim() int    { return d.dim }
func (d *Disk) Rows() int64 { return d.rows }

// DType is how the cache and host tier hold rows (F32 or BF16).
func (d *Disk) DType() backend.DType { return d.dt }

// CachedRows is the number of rows in the cache; HostRows in the host
// tier.
func (d *Disk) CachedRows() int { return d.n }
func (d *Disk) HostRows() int   { return d.hostRows }

// Tiers are the cache (nil until Fill) and the slot table (InPlace).
func (d *Disk) Tiers() (cache, slot backend.Buffer) { return d.cache, d.slot }

// Gather writes every row: cached, host and disk rows.
func (d *Disk) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	d.gather(ids, n, out, false)
}

// GatherMisses writes the rows outside the cache (InPlace).
func (d *Disk) GatherMisses(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	d.gather(ids, n, out, true)
}

// gather issues the split of the ids, the copies of the rows the device
// has, the host function and the copies of the rows it answers; started
// ahead (AheadSite), the split, the word that asks the store's watching
// goroutine to place it (disk_watch.go) and the device's copies, the rest
// left to Land.
func (d *Disk) gather(ids backend.Buffer, n backend.Count, out backend.Buffer, misses bool) {
	s := d.sc
	switch {
	case s == nil:
		d.fail(fmt.Errorf("featstore: disk tier: a gather before Fill"))
		return
	case n.Cap > s.cap:
		d.fail(fmt.Errorf("featstore: disk tier: a gather of %d rows, but Reserve said %d", n.Cap, s.cap))
		return
	}
	if d.cur < 0 {
		t := s.sites[0]
		d.split(s, t, ids, n, misses)
		d.hf.HostFunc(func() { d.place(s, t) })
		d.gatherDevice(s, n, out, misses)
		d.finish(t, n, out)
		return
	}
	t := s.sites[1+d.cur]
	t.started, t.n, t.out = true, n, out
	d.ops.AwaitHost(t.state, 1<<siteIdle|1<<sitePlaced, -1) // the site's gather before, if it was never landed, placed
	d.split(s, t, ids, n, misses)
	d.ops.AwaitHost(t.state, 0, siteAsked)
	d.gatherDevice(s, n, out, misses)
}

// split issues the device's half of the placing: the ids sorted by tier
// (SplitTiers, from the device's slot table: cache row, host tier row p
// as -2-p, or -1 on disk): each position's cache row (none for misses,
// which gathers no cached row) and the positions read in place into the
// scratch, the positions the host fetches listed into t's list (mapped),
// their count copied into t.listed for the host function. An id outside
// the table is the split's error, as in any gather.
func (d *Disk) split(s *scratch, t *site, ids backend.Buffer, n backend.Count, misses bool) {
	var cached backend.Buffer
	if !misses {
		cached = d.be.View(s.cached, 0, n.Cap)
	}
	d.be.Fill(s.placeN, 0)
	d.be.Fill(t.listN, 0)
	d.ops.SplitTiers(d.slot, ids, n, d.stageFrom(), cached, d.be.View(s.place, 0, 2*n.Cap), s.placeN,
		d.be.View(t.listB, 0, 2*n.Cap), t.listN, d.be.View(d.statsH, 2, 1))
	d.be.Gather(t.listN, 1, d.be.View(s.unit, 0, 1), backend.Count{Buf: s.unit, Off: 1, Cap: 1}, t.listedB)
}

// gatherDevice issues the copies of the rows the device has as soon as
// split has sorted them: the cached rows (none for misses) and the host
// tier's rows read in place, from split's list (GatherListed, whose
// staging is any site's: the list names none of its rows).
func (d *Disk) gatherDevice(s *scratch, n backend.Count, out backend.Buffer, misses bool) {
	if !misses && d.cache != nil {
		d.be.Gather(d.cache, d.dim, d.be.View(s.cached, 0, n.Cap), n, out)
	}
	d.ops.GatherListed(d.host, s.sites[0].stageB, d.dim, d.be.View(s.place, 0, 2*n.Cap), backend.Count{Buf: s.placeN, Cap: n.Cap}, out, d.be.View(d.statsH, 0, 2))
}

// finish issues the end of t's gather once its host function has
// answered: the copies of the rows the answered list names (GatherListed).
func (d *Disk) finish(t *site, n backend.Count, out backend.Buffer) {
	d.ops.GatherListed(d.host, t.stageB, d.dim, d.be.View(t.listB, 0, 2*n.Cap), backend.Count{Buf: t.listN, Cap: n.Cap}, out, d.statsD)
}

// stageFrom is the first host tier row the host stages: none without
// StageHost, else from InPlaceRows on.
func (d *Disk) stageFrom() int {
	if !d.cfg.StageHost {
		return d.hostRows
	}
	return int(min(max(d.cfg.InPlaceRows, 0), int64(d.hostRows)))
}

// FetchAhead makes the store Remote (on) or not: the replay driver then
// issues a step's whole gather (the ids' copy, the host function and the
// row copies) a step ahead, beside the step before, into rows of the next
// plan's own, so the disk reads and the host tier's rows over PCIe
// overlap the step before's compute instead of preceding the step's.
// Set it before the trainer is made: the plans are shaped by it.
func (d *Disk) FetchAhead(on bool) { d.ahead = on }

// Remote reports whether the replay driver fetches the rows a step ahead
// (FetchAhead).
func (d *Disk) Remote() bool { return d.ahead }

// SetHostRows caps the host tier Fill makes at n rows instead of
// DiskConfig.HostRows (a budget shared among several stores is split only
// once their caches are sized); call it before Fill.
func (d *Disk) SetHostRows(n int64) { d.cfg.HostRows = n }

// Reserve says how many rows a gather may have at most (a step's sources
// at its conservative envelope); Fill sizes the scratch for it, once: the
// staging never grows after (a larger gather fails, writing nothing), so
// the host memory Fill takes (HostUse) is all the store ever holds. Call
// it before Fill.
func (d *Disk) Reserve(rows int) { d.reserve = rows }

// fail records the first failure.
func (d *Disk) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
	}
}

// Err is the first failure of a gather's host work (a row that could not
// be read), or nil.
func (d *Disk) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// DeviceBytes counts the cache, the slot tables, the counters and the
// sites' device scratch (the host tier and staging are host memory).
func (d *Disk) DeviceBytes() int64 {
	b := d.rows*4 + 40
	if d.cache != nil {
		b += int64(d.cache.Len()) * int64(d.dt.Size())
	}
	if s := d.sc; s != nil {
		b += s.deviceBytes()
	}
	return b
}

// Stats reads the counters: rows gathered from the host tier or disk, and
// all rows, since the store was made or reset; the first failure of a
// gather's reads, if any.
func (d *Disk) Stats() (hostRows, rows int64, err error) {
	c, h, k, err := d.TierStats()
	return h + k, c + h + k, err
}

// TierStats reads the rows gathered from each tier: the cache, the host
// tier and disk.
func (d *Disk) TierStats() (cache, host, disk int64, err error) {
	sh, sd := make([]int64, 3), make([]int64, 2)
	d.be.Read(sh, d.statsH, 0)
	d.be.Read(sd, d.statsD, 0)
	if err := d.be.Sync(); err != nil {
		return 0, 0, 0, err
	}
	// The split counts every row, the gather of the rows read in place
	// those; the answered list's gather counts the staging's rows, the
	// host tier's staged rows among them (the host counted those,
	// stagedHost), and the host tier's rows the list named.
	staged := d.stagedHost.Load()
	return sh[2] - sh[1] - sd[0] - sd[1], sh[1] + sd[1] + staged, sd[0] - staged, d.Err()
}

// HostTime is what the gathers' host work took since the store was
// made or reset.
func (d *Disk) HostTime() HostTime { return d.clock.read() }

// ResetStats zeroes the counters and the host functions' times.
func (d *Disk) ResetStats() {
	d.clock.reset()
	d.stagedHost.Store(0)
	d.be.Write(d.statsH, 0, []int64{0, 0, 0})
	d.be.Write(d.statsD, 0, []int64{0, 0})
}

// Free releases the sites, then the tiers and tables: the sites' host
// work, which free waits for, reads the host tier and the file.
func (d *Disk) Free() {
	if d.sc != nil {
		d.sc.free(d.be)
		d.sc = nil
	}
	d.freeHost()
	for _, b := range []backend.Buffer{d.slot, d.cache, d.statsH, d.statsD} {
		if b != nil {
			d.be.Free(b)
		}
	}
	d.slot, d.cache, d.statsH, d.statsD = nil, nil, nil, nil
	if d.dio != nil {
		d.dio.close()
		d.dio = nil
	}
}

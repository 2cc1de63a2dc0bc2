package featstore

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

// fillChunk is how many rows Fill reads and copies at a time.
const fillChunk = 1 << 14

// Fill reads the first cached vertices of the ranking into the cache in
// backend memory and the next DiskConfig.HostRows into the host tier
// (both clipped to the ranking), telling Progress as it goes, and makes
// the gathers' scratch for Reserve's rows (a staging of as many, or of
// the rows left on disk where they are fewer). Call it once, before the
// first gather.
func (d *Disk) Fill(cached int) error {
	if d.sc != nil {
		return fmt.Errorf("featstore: the disk store's tiers are filled already (%d and %d rows)", d.n, d.hostRows)
	}
	if d.reserve <= 0 {
		return fmt.Errorf("featstore: the disk store's gathers are not reserved (Reserve)")
	}
	cached = max(0, min(cached, len(d.order)))
	h := int(max(0, min(d.cfg.HostRows, int64(len(d.order)-cached))))
	sc, err := d.newScratch(d.reserve, int(min(int64(d.reserve), d.rows-int64(cached+h))), h)
	if err != nil {
		return err
	}
	d.sc = sc
	total, done := int64(cached+h), int64(0)
	progress := func(n int) {
		done += int64(n)
		if d.cfg.Progress != nil {
			d.cfg.Progress(done, total)
		}
	}
	if cached > 0 {
		cache, err := d.be.Alloc(d.dt, cached*d.dim)
		if err != nil {
			return fmt.Errorf("featstore: cache of %d rows: %w", cached, err)
		}
		if err := d.fillCache(cache, d.order[:cached], progress); err != nil {
			d.be.Free(cache)
			return err
		}
		d.cache, d.n = cache, cached
		d.tier = slotTable(d.rows, d.order[:cached])
		d.be.Write(d.slot, 0, d.tier) // before the host tier's codes: Write has the data once it returns
	}
	if h > 0 {
		data := newRows(d.dt, h+1, d.dim)
		for lo := 0; lo < h; lo += fillChunk {
			hi := min(h, lo+fillChunk)
			if err := d.readRows(data, ranked(d.order[cached:], lo, hi, lo)); err != nil {
				return err
			}
			progress(hi - lo)
		}
		if err := d.setHost(data, h); err != nil {
			return fmt.Errorf("featstore: host tier of %d rows: %w", h, err)
		}
		for i, v := range d.order[cached : cached+h] {
			d.tier[v] = hostCode(i)
		}
	}
	return d.be.Sync()
}

// fillCache reads vertices into cache, a chunk of rows at a time through
// one host buffer.
func (d *Disk) fillCache(cache backend.Buffer, vertices []int32, progress func(int)) error {
	buf := newRows(d.dt, min(len(vertices), fillChunk), d.dim)
	for lo := 0; lo < len(vertices); lo += fillChunk {
		hi := min(len(vertices), lo+fillChunk)
		if err := d.readRows(buf, ranked(vertices, lo, hi, 0)); err != nil {
			return err
		}
		d.be.Write(cache, lo*d.dim, prefixRows(buf, (hi-lo)*d.dim)) // Write has the data once it returns
		progress(hi - lo)
	}
	return nil
}

// ranked is vertices[lo:hi] as rows to read, vertex lo+k into row base+k.
func ranked(vertices []int32, lo, hi, base int) []diskRow {
	rows := make([]diskRow, hi-lo)
	for k := range rows {
		rows[k] = diskRow{v: vertices[lo+k], pos: int32(base + k)}
	}
	return rows
}

// prefixRows is the first n values of rows made by newRows.
func prefixRows(rows any, n int) any {
	if r, ok := rows.([]uint16); ok {
		return r[:n]
	}
	return rows.([]float32)[:n]
}

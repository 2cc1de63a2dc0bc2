package featstore

import (
	"fmt"
	"slices"
)

// fillChunk is how many rows Fill reads and copies at a time; fillLeast
// the fewest the cache's rows are read through (a staging or host tier
// smaller than that leaves them a passing buffer of fillChunk rows).
const fillChunk, fillLeast = 1 << 14, 1 << 10

// Fill reads the first cached vertices of the ranking into the cache in
// backend memory and the next DiskConfig.HostRows into the host tier
// (both clipped to the ranking), telling Progress as it goes, and makes
// the gathers' scratch for Reserve's rows (a staging of as many, or of
// the rows left on disk where they are fewer) and the readers' buffers:
// the host memory PlanHost says. The cache's rows pass through the
// staging or the host tier, whichever is larger, before those are used
// (through a passing buffer of fillChunk rows only where both hold fewer
// than fillLeast). Call it once, before the first gather.
//
// It reads each tier's rows in the order of the vertices, so that each of
// its chunks reads a stretch of the file and, where a tier takes most
// rows, adjacent rows share reads: read in rank order, every row of
// papers-sim's 8 GB table was a read of its own (107 s; 17 s so). The host
// tier keeps its rows in rank order all the same (a rows' table of 8 bytes
// a row while Fill runs): the device reads that tier in place, and with
// its most read rows together papers-sim's steps were 1.37x as fast as
// with the tier in the order of the vertices (447-473 against 329-336
// steps/s, a 9.9% cache, H200, one call). The cache, in device memory,
// holds its rows by vertex (byVertex); its chunks go out as they are read.
func (d *Disk) Fill(cached int) error {
	if d.sc != nil {
		return fmt.Errorf("featstore: the disk store's tiers are filled already (%d and %d rows)", d.n, d.hostRows)
	}
	if d.reserve <= 0 {
		return fmt.Errorf("featstore: the disk store's gathers are not reserved (Reserve)")
	}
	cached, h := d.clip(cached, d.cfg.HostRows)
	sc, err := d.newScratch(d.reserve, d.stageRowsFor(cached, h), d.sites())
	if err != nil {
		return err
	}
	d.sc = sc
	if d.lookahead >= 2 {
		sc.watcher = d.watch(sc)
	}
	d.makeReadBufs()
	data := newHostRows(d.dt, h+1, d.dim)
	total, done := int64(cached+h), int64(0)
	progress := func(n int) {
		done += int64(n)
		if d.cfg.Progress != nil {
			d.cfg.Progress(done, total)
		}
	}
	if cached > 0 {
		if err := d.fillCache(byVertex(d.order[:cached]), larger(data, sc.sites[0].stage), progress); err != nil {
			return err
		}
	}
	if h > 0 {
		host := d.order[cached : cached+h]
		rows := ranked(host, 0, h, 0)
		slices.SortFunc(rows, func(a, b diskRow) int { return int(a.v) - int(b.v) })
		for lo := 0; lo < h; lo += fillChunk {
			hi := min(h, lo+fillChunk)
			if err := d.readRows(data, rows[lo:hi]); err != nil {
				return err
			}
			progress(hi - lo)
		}
		if err := d.setHost(data, h); err != nil {
			return fmt.Errorf("featstore: host tier of %d rows: %w", h, err)
		}
		for i, v := range host {
			d.tier[v] = hostCode(i)
		}
	}
	if cached > 0 || h > 0 {
		// The device's slot table takes the codes too, so that the ids'
		// split gives each row's tier (SplitTiers).
		d.be.Write(d.slot, 0, d.tier)
	}
	return d.be.Sync()
}

// byVertex is a tier's vertices sorted by id, the order of the cache's
// rows.
func byVertex(vertices []int32) []int32 {
	s := slices.Clone(vertices)
	slices.Sort(s)
	return s
}

// fillCache makes the cache of vertices (the ranking's first, by
// vertex), read a chunk of rows at a time through buf (rows made by
// newRows, or a passing buffer where buf holds fewer than a chunk's rows).
func (d *Disk) fillCache(vertices []int32, buf any, progress func(int)) error {
	cached := len(vertices)
	chunk := min(cached, fillChunk)
	if n := int(valuesBytes(buf) / d.rowBytes()); n >= min(chunk, fillLeast) {
		chunk = min(chunk, n)
	} else {
		buf = newRows(d.dt, chunk, d.dim)
	}
	cache, err := d.be.Alloc(d.dt, cached*d.dim)
	if err != nil {
		return fmt.Errorf("featstore: cache of %d rows: %w", cached, err)
	}
	for lo := 0; lo < cached; lo += chunk {
		hi := min(cached, lo+chunk)
		if err := d.readRows(buf, ranked(vertices, lo, hi, 0)); err != nil {
			d.be.Free(cache)
			return err
		}
		d.be.Write(cache, lo*d.dim, prefixRows(buf, (hi-lo)*d.dim)) // Write has the data once it returns
		progress(hi - lo)
	}
	d.cache, d.n = cache, cached
	d.tier = slotTable(d.rows, vertices)
	return nil
}

// larger is whichever of two row buffers made by newRows holds more.
func larger(a, b any) any {
	if valuesBytes(b) > valuesBytes(a) {
		return b
	}
	return a
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

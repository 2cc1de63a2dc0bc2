package featstore

import (
	"errors"
	"slices"
	"sync"
)

// maxRun is the most adjacent rows one read takes.
const maxRun = 64

// readBufBytes is a reader's buffer: maxRun rows of the file.
func (d *Disk) readBufBytes() int64 { return maxRun * d.cfg.File.RowBytes() }

// readRows reads rows[k].v of the file into row rows[k].pos of dst (dt
// values, made by newRows), converting where the file holds the other
// type: in the order of the vertices, split among the readers, each
// through its buffer of d.bufs, runs of adjacent rows in one positional
// read. rows is sorted in place. Calls do not overlap (Fill's, then the
// gathers' host functions in op order).
func (d *Disk) readRows(dst any, rows []diskRow) error {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b diskRow) int { return int(a.v) - int(b.v) })
	return d.readAll(dst, rows, d.readBuffered)
}

// readAll splits sorted rows among the readers, each reading its share
// into dst through its own buffer with read.
func (d *Disk) readAll(dst any, rows []diskRow, read func(dst any, rows []diskRow, buf []byte) error) error {
	workers := min(len(d.bufs), (len(rows)+maxRun-1)/maxRun)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(rows)/workers, (w+1)*len(rows)/workers
		wg.Go(func() { errs[w] = read(dst, rows[lo:hi], d.bufs[w]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// readBuffered reads rows (sorted by vertex) into dst, a run of adjacent
// vertices at a time, through buf.
func (d *Disk) readBuffered(dst any, rows []diskRow, buf []byte) error {
	rb := int(d.cfg.File.RowBytes())
	for k := 0; k < len(rows); {
		run := 1
		for k+run < len(rows) && run < maxRun && rows[k+run].v == rows[k].v+int32(run) {
			run++
		}
		if err := d.cfg.File.ReadRows(buf[:run*rb], int64(rows[k].v)); err != nil {
			return err
		}
		for j := range run {
			putFileRow(dst, int(rows[k+j].pos), d.dim, buf[j*rb:(j+1)*rb], d.cfg.FileType)
		}
		k += run
	}
	return nil
}

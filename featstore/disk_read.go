package featstore

import (
	"errors"
	"fmt"
	"slices"
	"syscall"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// maxRun is the most adjacent rows one read through the page cache takes
// (and about the most one direct read's span holds).
const maxRun = 64

// directGap is the most bytes between two rows that one direct read
// takes with them (blocks nobody asked for) rather than reading the second
// row with a read of its own: about what an NVMe drive transfers in the
// latency of one more read.
const directGap = 32 << 10

// readSpan is a reader's buffer: maxRun rows of the file in whole
// blocks, or where that is less, the blocks one row may touch (a direct
// read's span begins at the block of its first byte).
func (d *Disk) readSpan() int64 {
	rb := d.cfg.File.RowBytes()
	return max(alignBlock(maxRun*rb), alignBlock(rb)+blockSize)
}

// readBufBytes is the readers' buffers: one allocation of a readSpan
// each, and a block for its alignment.
func (d *Disk) readBufBytes() int64 { return int64(d.readers())*d.readSpan() + blockSize }

// makeReadBufs makes the readers' buffers (d.slab, cut into d.bufs), each
// aligned to a block and whole blocks long, as direct reads need.
func (d *Disk) makeReadBufs() {
	span := int(d.readSpan())
	d.slab = make([]byte, d.readBufBytes())
	all := aligned(d.slab)
	d.bufs = make([][]byte, d.readers())
	for i := range d.bufs {
		d.bufs[i] = all[i*span : (i+1)*span : (i+1)*span]
	}
}

// readRows reads rows[k].v of the file into row rows[k].pos of dst (dt
// values, made by newRows), converting where the file holds the other
// type: in the order of the vertices, split among the readers, each
// through its buffer of d.bufs, directly (spans of whole blocks) where
// the store reads with O_DIRECT, else runs of adjacent rows in one
// positional read through the page cache. A direct read the file system
// refuses (EINVAL) turns the store to the page cache for good, said once
// on the log, and the rows are read again. rows is sorted in place. Calls
// do not overlap (Fill's, then the gathers' host work, under readMu).
func (d *Disk) readRows(dst any, rows []diskRow) error {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b diskRow) int { return int(a.v) - int(b.v) })
	d.readMu.Lock()
	defer d.readMu.Unlock()
	if d.dio != nil {
		err := d.readAll(dst, rows, d.readDirect)
		if !errors.Is(err, syscall.EINVAL) {
			return err
		}
		d.noDirect(err)
	}
	return d.readAll(dst, rows, d.readBuffered)
}

// readAll splits sorted rows among the readers, each reading its share
// into dst through its own buffer with read.
func (d *Disk) readAll(dst any, rows []diskRow, read func(dst any, rows []diskRow, buf []byte) error) error {
	workers := min(len(d.bufs), (len(rows)+maxRun-1)/maxRun)
	errs := make([]error, workers)
	parallel.Range(int64(len(rows)), workers, func(w int, lo, hi int64) { errs[w] = read(dst, rows[lo:hi], d.bufs[w]) })
	return errors.Join(errs...)
}

// readBuffered reads rows (sorted by vertex) into dst, a run of adjacent
// vertices at a time, through buf and the page cache.
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

// readDirect reads rows (sorted by vertex) into dst with O_DIRECT through
// span (aligned, whole blocks): each read whole blocks from the block of
// a row's first byte to the block of the last row's last byte, taking the
// next rows while their first block begins at most directGap past those
// and they fit span, so rows that share a block are read once, and a tier
// that takes most rows reads long stretches of the file.
func (d *Disk) readDirect(dst any, rows []diskRow, span []byte) error {
	rb, f := d.cfg.File.RowBytes(), d.dio
	at := func(r diskRow) int64 { return f.offset + int64(r.v)*rb }
	for k := 0; k < len(rows); {
		start, end := at(rows[k])&^(blockSize-1), alignBlock(at(rows[k])+rb)
		j := k + 1
		for ; j < len(rows); j++ {
			e := alignBlock(at(rows[j]) + rb)
			if at(rows[j])&^(blockSize-1) > end+directGap || e-start > int64(len(span)) {
				break
			}
			end = e
		}
		n, err := f.readAt(span[:end-start], start)
		if err != nil {
			return fmt.Errorf("%s: reading rows [%d, %d) with O_DIRECT: %w", f.path, rows[k].v, rows[j-1].v+1, err)
		}
		if need := at(rows[j-1]) + rb - start; int64(n) < need {
			return fmt.Errorf("%s: truncated: rows [%d, %d) lie past the end of the file", f.path, rows[k].v, rows[j-1].v+1)
		}
		for _, r := range rows[k:j] {
			o := at(r) - start
			putFileRow(dst, int(r.pos), d.dim, span[o:o+rb], d.cfg.FileType)
		}
		k = j
	}
	return nil
}

// noDirect turns the store to reads through the page cache, saying why
// on the log.
func (d *Disk) noDirect(why error) {
	if d.cfg.Log != nil {
		fmt.Fprintf(d.cfg.Log, "featstore: %s: reading rows through the page cache: %v\n", d.dio.path, why)
	}
	d.dio.close()
	d.dio = nil
}

package featstore

import (
	"fmt"
	"sync"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// The host tier's rows of a gather staged by its host function
// (DiskConfig.StageHost): copied into the staging after the disk rows,
// so that the device reads every row outside the cache (but the host
// tier's first InPlaceRows) from one contiguous area.

// stageHost answers the list's host tier entries (a code <= -2; the disk
// entries, answered first, are >= 0 or skipped) with staging rows from
// base on (the disk rows' are before), in the order of the list (the
// staging's gather reads them with the disk rows, and stagedHost counts
// them), and starts their copies on goroutines that wg waits for. Where
// the staging holds a row for every listed entry (a gather without
// repeats always fits), each entry gets its own row, answered by the
// copying goroutines (stageHostOwn); otherwise, here, a repeated row
// shares its first's (t.seen, keyed by the code), and a row the staging
// cannot hold is a failure, its entries skipped, and the copies are
// listed at the end of t.disk's room, after the disk rows at its start.
func (d *Disk) stageHost(s *scratch, t *site, list []int32, base int, wg *sync.WaitGroup) {
	if len(list)/2 <= s.stageRows {
		wg.Go(func() { d.stageHostOwn(t, list, base) })
		return
	}
	room, n, answered := t.disk[base:s.stageRows], 0, int64(0)
	free := s.stageRows - base
	defer func() { d.stagedHost.Add(answered) }()
	for j := 1; j < len(list); j += 2 {
		code := list[j]
		if code > hostCode(0) {
			continue // a disk entry
		}
		if k, ok := t.seen[code]; ok {
			list[j] = k
			answered++
			continue
		}
		if n == free {
			d.fail(fmt.Errorf("featstore: disk tier: a gather needs more than the %d rows of staging", s.stageRows))
			list[j] = skipped
			continue
		}
		t.remember(code, int32(base+n))
		n++
		room[free-n] = diskRow{v: hostCode(0) - code, pos: int32(base + n - 1)}
		list[j] = int32(base + n - 1)
		answered++
	}
	if n == 0 {
		return
	}
	copies := room[free-n:]
	wg.Go(func() {
		parallel.Range(int64(n), d.shares(n, copyChunk), func(_ int, lo, hi int64) {
			part := copies[lo:hi]
			d.copyHostRows(t, len(part), func(j int) (int, int) { return int(part[j].pos), int(part[j].v) })
		})
	})
}

// stageHostOwn is stageHost where every listed entry has a staging row
// of its own: the goroutines that copy the rows answer the entries too,
// each a contiguous part of the list, its rows after those of the parts
// before (a first pass counts each part's host tier entries), so that
// the host has no serial pass over the list (on papers-sim at a tenth
// cached, about a fifth of a gather's host work).
func (d *Disk) stageHostOwn(t *site, list []int32, base int) {
	m := len(list) / 2
	parts := d.shares(m, copyChunk)
	from := make([]int, parts+1) // part w's first row: base and the parts' counts before it
	parallel.Range(int64(m), parts, func(w int, lo, hi int64) {
		n := 0
		for j := 2*lo + 1; j < 2*hi; j += 2 {
			if list[j] <= hostCode(0) {
				n++
			}
		}
		from[w+1] = n
	})
	from[0] = base
	for w := range parts {
		from[w+1] += from[w]
	}
	parallel.Range(int64(m), parts, func(w int, lo, hi int64) {
		k := from[w]
		d.copyHostRows(t, int(hi-lo), func(i int) (int, int) {
			j := 2*(int(lo)+i) + 1
			code := list[j]
			if code > hostCode(0) {
				return -1, 0 // a disk entry
			}
			list[j] = int32(k)
			k++
			return k - 1, int(hostCode(0) - code)
		})
	})
	d.stagedHost.Add(int64(from[parts] - base))
}

// copyHostRows copies n host tier rows into the staging: the j-th, host
// tier row src, into staging row dst of row(j), none where dst < 0.
func (d *Disk) copyHostRows(t *site, n int, row func(j int) (dst, src int)) {
	switch st := t.stage.(type) {
	case []float32:
		copyRowsOf(st, d.hostData.([]float32), d.dim, n, row)
	case []uint16:
		copyRowsOf(st, d.hostData.([]uint16), d.dim, n, row)
	}
}

func copyRowsOf[T float32 | uint16](stage, host []T, dim, n int, row func(j int) (dst, src int)) {
	for j := range n {
		k, p := row(j)
		if k < 0 {
			continue
		}
		copy(stage[k*dim:(k+1)*dim], host[p*dim:(p+1)*dim])
	}
}

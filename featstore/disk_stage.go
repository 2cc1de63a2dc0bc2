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
// repeats always fits), each entry gets its own row; otherwise a repeated
// row shares its first's (t.seen, keyed by the code), and a row the
// staging cannot hold is a failure, its entries skipped. The copies are
// listed at the end of t.disk's room, after the disk rows at its start.
func (d *Disk) stageHost(s *scratch, t *site, list []int32, base int, wg *sync.WaitGroup) {
	room, n, answered := t.disk[base:s.stageRows], 0, int64(0)
	free := s.stageRows - base
	own := len(list)/2 <= s.stageRows
	defer func() { d.stagedHost.Add(answered) }()
	for j := 1; j < len(list); j += 2 {
		code := list[j]
		if code > hostCode(0) {
			continue // a disk entry
		}
		if !own {
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
		}
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

// copyHostRows copies n host tier rows into the staging: the j-th, host
// tier row src, into staging row dst of row(j).
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
		copy(stage[k*dim:(k+1)*dim], host[p*dim:(p+1)*dim])
	}
}

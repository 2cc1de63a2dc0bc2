package featstore

import (
	"fmt"
	"sync"
)

// The host tier's rows of a gather staged by its host function
// (DiskConfig.StageHost): copied into the staging before the disk rows,
// so that the device reads every row outside the cache from one
// contiguous area, in the order of the ids.

// stageHost gives the host tier rows that parts placed (their positions,
// rh holding each one's host tier row) staging rows from 0 in the order of
// the ids, writes them into rh and starts their copies on goroutines that
// wg waits for; it is the staging rows they take. Where the staging holds
// a row for every position outside the cache (a gather without repeats
// always fits), each position gets its own row, each part copying its
// own, in parallel; otherwise repeated vertices share their first's row
// (copyRepeats).
func (d *Disk) stageHost(s *scratch, parts []placePart, wg *sync.WaitGroup) int {
	nh, nd := 0, 0
	for k := range parts {
		nh, nd = nh+len(parts[k].host), nd+len(parts[k].disk)
	}
	if nh == 0 {
		return 0
	}
	if nh+nd > s.stageRows {
		return d.copyRepeats(s, parts, wg)
	}
	base := 0
	for k := range parts {
		pos, at := parts[k].host, base
		base += len(pos)
		if len(pos) > 0 {
			wg.Go(func() { d.copyAt(s, pos, at) })
		}
	}
	return nh
}

// copyAt copies the host tier rows of positions pos (rh's) into staging
// rows at, at+1, ... and gives each position its row in rh.
func (d *Disk) copyAt(s *scratch, pos []int32, at int) {
	d.copyHostRows(s, len(pos), func(j int) (int, int) { return at + j, int(s.rh[pos[j]]) })
	for j, i := range pos {
		s.rh[i] = int32(at + j)
	}
}

// copyHostRows copies n host tier rows into the staging: the j-th, host
// tier row src, into staging row dst of row(j).
func (d *Disk) copyHostRows(s *scratch, n int, row func(j int) (dst, src int)) {
	switch st := s.stage.(type) {
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

// copyRepeats is stageHost where the positions outside the cache
// outnumber the staging's rows: the host tier rows, in the order of the
// ids, take staging rows of their own, a repeated row the row of its
// first (s.seen, keyed by the row's host code), the copies listed at the
// end of s.disk's room and made on one goroutine (wg's); a row the
// staging cannot hold is a failure, and its positions are skipped.
func (d *Disk) copyRepeats(s *scratch, parts []placePart, wg *sync.WaitGroup) int {
	room, n := s.disk[:s.stageRows], 0
	for k := range parts {
		for _, i := range parts[k].host {
			key := hostCode(int(s.rh[i]))
			if k, ok := s.seen[key]; ok {
				s.rh[i] = k
				continue
			}
			if n == s.stageRows {
				d.fail(fmt.Errorf("featstore: disk tier: a gather needs more than the %d rows of staging", s.stageRows))
				s.rh[i] = s.hostSkip
				continue
			}
			k := int32(n)
			n++
			room[s.stageRows-n] = diskRow{v: s.rh[i], pos: k}
			s.remember(key, k)
			s.rh[i] = k
		}
	}
	copies := room[s.stageRows-n:]
	wg.Go(func() {
		d.copyHostRows(s, len(copies), func(j int) (int, int) { return int(copies[j].pos), int(copies[j].v) })
	})
	return n
}

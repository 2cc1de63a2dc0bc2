package featstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/fanout-gnn/fanout/internal/parallel"
)

// onDisk is the code of Disk.tier for a vertex outside the cache and the
// host tier.
const onDisk = -1

// hostCode is the code of Disk.tier for host tier row p (<= -2).
func hostCode(p int) int32 { return int32(-2 - p) }

// placeChunk is the fewest ids a placing goroutine takes: a gather of
// fewer is placed by one.
const placeChunk = 1 << 14

// placePart is what one goroutine of place found in its share of a
// gather's ids, kept until the next gather restores rh and rd: the
// positions it gave a host tier row, and the disk rows it met (vertex v at
// position pos of the gather, repeats included), in the order of the ids.
type placePart struct {
	host []int32
	disk []diskRow
	bad  int32 // the first id outside the table, where hasBad
	// hasBad says an id of the share lies outside the table.
	hasBad bool
}

// place is the host function of a gather: it takes the step's live ids
// (the count the device copied into s.live) with their codes in rc (the
// device's slot table's: cache row, host tier row p as -2-p, or onDisk),
// says in which other tier each row lies and reads the disk rows into
// staging (and with StageHost copies the host tier's rows there first,
// disk_stage.go). The ids outside the cache are placed by goroutines, each
// a chunk; their disk rows are then given staging rows in the order of the
// ids, a repeated vertex the row of its first, so the result does not
// depend on the number of goroutines.
func (d *Disk) place(s *scratch) {
	start := time.Now()
	d.restore(s)
	live := min(max(int(s.live[0]), 0), s.cap)
	workers := d.shares(live, placeChunk)
	for len(s.parts) < workers {
		s.parts = append(s.parts, placePart{})
	}
	parallel.Range(int64(live), workers, func(w int, lo, hi int64) {
		p := &s.parts[w]
		p.host, p.disk = s.hostPos[lo:lo:hi], s.diskPos[lo:lo:hi] // at most a position each: nothing grows
		d.placePart(s, p, int(lo), int(hi))
	})
	s.forget()
	placed := time.Now()
	var wg sync.WaitGroup // the host tier's copies, beside the reads: they wait on memory, the reads on the file
	base := 0
	if d.cfg.StageHost {
		base = d.stageHost(s, s.parts[:workers], &wg)
	}
	s.disk = d.stageDisk(s, s.parts[:workers], base)
	if err := d.readRows(s.stage, s.disk); err != nil {
		d.fail(err)
	}
	wg.Wait()
	d.clock.add(start, placed, time.Now())
}

// shares is how many goroutines split n items, each taking at least
// least of them: d.workers (0: GOMAXPROCS), at most n/least, at least one.
func (d *Disk) shares(n, least int) int {
	return max(1, min(parallel.Threads(d.workers), n/least))
}

// restore gives the positions that the gather before gave a host tier or
// staging row the rows that are skipped again, so that a gather writes rh
// and rd only where its ids are outside the cache: each part's positions
// by a goroutine of its own (the parts' positions are distinct).
func (d *Disk) restore(s *scratch) {
	skip := int32(s.stageRows)
	if len(s.parts) == 0 {
		return
	}
	parallel.Range(int64(len(s.parts)), len(s.parts), func(k int, _, _ int64) {
		p := &s.parts[k]
		for _, i := range p.host {
			s.rh[i] = s.hostSkip
		}
		for _, r := range p.disk {
			s.rd[r.pos] = skip
		}
		p.host, p.disk, p.hasBad = p.host[:0], p.disk[:0], false
	})
}

// placePart places the ids of positions [lo, hi) into p: a cached id
// (rc >= 0) is left as the device wrote it; another gets cache row 0 in
// rc (its row is written over) and its host tier row in rh (with
// StageHost, until stageHost gives it a staging row), or is a disk row of
// p. The codes came with the ids, so the pass reads the positions in
// order and nothing else (it looked each code up in the host's table of
// codes once, a cache miss an id outside the cache: papers-sim, a tenth
// cached, 760 µs a gather of 240,000 ids on 16 cores, H200 machine), and
// an id only where its row is outside the cache; it writes nothing at a
// cached position (the count came with the ids too).
func (d *Disk) placePart(s *scratch, p *placePart, lo, hi int) {
	for i := lo; i < hi; i++ {
		code := s.rc[i]
		if code >= 0 {
			continue
		}
		v := s.ids[i]
		s.rc[i] = 0
		switch {
		case v < 0 || int64(v) >= d.rows:
			if !p.hasBad {
				p.bad, p.hasBad = v, true
			}
		case code <= hostCode(0):
			s.rh[i] = hostCode(0) - code
			p.host = append(p.host, int32(i))
		default:
			p.disk = append(p.disk, diskRow{v: v, pos: int32(i)})
		}
	}
}

// stageDisk gives the disk rows of parts (in the order of the ids) their
// staging rows in rd from base on (the rows before are the host tier's,
// StageHost), a repeated vertex the row of its first, and is the rows to
// read, vertex v into staging row pos, in s.disk's room (whose end the
// host tier's copies may hold: at most base rows). An id outside the
// table, or more distinct rows than the staging holds, is a failure; the
// rows it concerns are skipped.
func (d *Disk) stageDisk(s *scratch, parts []placePart, base int) []diskRow {
	rows := s.disk[:0]
	for k := range parts {
		if parts[k].hasBad {
			d.fail(fmt.Errorf("featstore: disk tier: id %d outside the table of %d rows", parts[k].bad, d.rows))
		}
		for _, r := range parts[k].disk {
			if k, ok := s.seen[r.v]; ok { // a repeat
				s.rd[r.pos] = k
				continue
			}
			if base+len(rows) == s.stageRows {
				d.fail(fmt.Errorf("featstore: disk tier: a gather needs more than the %d rows of staging", s.stageRows))
				continue
			}
			k := int32(base + len(rows))
			s.remember(r.v, k)
			s.rd[r.pos] = k
			rows = append(rows, diskRow{v: r.v, pos: k})
		}
	}
	return rows
}

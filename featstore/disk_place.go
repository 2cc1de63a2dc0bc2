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

// copyChunk is the fewest rows a copying goroutine takes.
const copyChunk = 1 << 11

// skipped is the answer to a listed position that gets no staging row
// (the staging is full): GatherListed writes nothing there.
const skipped = -1

// place is the host function of a gather: it answers the entries the
// device listed (split: the positions whose rows the host fetches, each
// with its vertex, a row on disk, or with StageHost its host tier code)
// with staging rows, in place, and fills those rows: the disk rows first,
// then the host tier's rows (StageHost, disk_stage.go), copied by
// goroutines beside the disk reads. A vertex on disk listed twice takes one
// row. It touches only the listed entries, not the gather's other ids:
// the device wrote their rows itself.
func (d *Disk) place(s *scratch, t *site) {
	start := time.Now()
	t.forget()
	m := min(max(int(t.listed[0]), 0), s.cap)
	list := t.list[:2*m]
	var wg sync.WaitGroup // the host tier's copies, beside the reads: they wait on memory, the reads on the file
	t.disk = d.stageDisk(s, t, list)
	if d.cfg.StageHost {
		d.stageHost(s, t, list, len(t.disk), &wg)
	}
	placed := time.Now()
	if err := d.readRows(t.stage, t.disk); err != nil {
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

// stageDisk answers the list's disk entries (a vertex >= 0) with staging
// rows from 0 (the host tier's staged rows follow, StageHost), a vertex
// listed again the row of its first, and is the rows to read, vertex v
// into staging row pos, in t.disk's room from its start. More distinct
// rows than the staging holds is a failure; the entries it concerns are
// skipped.
func (d *Disk) stageDisk(s *scratch, t *site, list []int32) []diskRow {
	rows := t.disk[:0]
	for j := 1; j < len(list); j += 2 {
		v := list[j]
		if v < 0 {
			continue // a host tier entry: stageHost answers it after
		}
		if k, ok := t.seen[v]; ok { // a repeat
			list[j] = k
			continue
		}
		if len(rows) == s.stageRows {
			d.fail(fmt.Errorf("featstore: disk tier: a gather needs more than the %d rows of staging", s.stageRows))
			list[j] = skipped
			continue
		}
		k := int32(len(rows))
		t.remember(v, k)
		list[j] = k
		rows = append(rows, diskRow{v: v, pos: k})
	}
	return rows
}

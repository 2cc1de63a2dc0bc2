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
// (the staging is full): TakeStaged writes nothing there.
const skipped = -1

// place is the host function of a gather: it answers the entries the
// device listed (split: the positions whose rows the host fetches, each
// with its vertex, a row on disk, or with StageHost its host tier code)
// with staging rows, in place (a disk row's staging row, a host tier row's
// as -2 - row), and fills those rows: the host tier's rows copied first
// (StageHost, disk_stage.go), by goroutines beside the disk reads, the
// disk rows read after them. A vertex on disk listed twice takes one
// row. It touches only the listed entries, not the gather's other ids:
// the device wrote their rows itself.
func (d *Disk) place(s *scratch, t *site) {
	start := time.Now()
	t.forget()
	m := min(max(int(t.listed[0]), 0), s.cap)
	list := t.list[:2*m]
	var wg sync.WaitGroup // the host tier's copies, beside the reads: they wait on memory, the reads on the file
	base := 0
	if d.cfg.StageHost {
		base = d.stageHost(s, t, list, &wg)
	}
	t.disk = d.stageDisk(s, t, list, base)
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
// rows from base on (the rows before are the host tier's, StageHost), a
// vertex listed again the row of its first, and is the rows to read,
// vertex v into staging row pos, in t.disk's room from its start (whose
// end the host tier's copies hold: at most base rows). More distinct rows
// than the staging holds is a failure; the entries it concerns are
// skipped.
func (d *Disk) stageDisk(s *scratch, t *site, list []int32, base int) []diskRow {
	rows := t.disk[:0]
	for j := 1; j < len(list); j += 2 {
		v := list[j]
		if v < 0 {
			continue // a host tier entry, answered already
		}
		if k, ok := t.seen[v]; ok { // a repeat
			list[j] = k
			continue
		}
		if base+len(rows) == s.stageRows {
			d.fail(fmt.Errorf("featstore: disk tier: a gather needs more than the %d rows of staging", s.stageRows))
			list[j] = skipped
			continue
		}
		k := int32(base + len(rows))
		t.remember(v, k)
		list[j] = k
		rows = append(rows, diskRow{v: v, pos: k})
	}
	return rows
}

package featstore

import (
	"fmt"
	"unsafe"

	"github.com/fanout-gnn/fanout/backend"
)

// scratch is what the gathers of a Disk store share, sized by Reserve for
// gathers of up to cap rows, of which up to stageRows staged (from disk;
// with StageHost, from the host tier too). The device sorts a gather's
// ids by tier (SplitTiers): it writes each position's cache row into
// device memory, lists the positions of host tier rows read in place
// there too, and lists the positions whose rows the host fetches into a
// site's host memory, mapped for it; the device gathers the rows read in
// place at once (GatherListed), the host answers each entry of its list in
// place with its staging row, and the device then gathers the rows the
// answered list names (GatherListed).
// A whole gather (in op order) uses sites[0]; a gather started ahead
// (SetLookahead, AheadSite k) uses sites[1+k] from its start to its Land,
// so that several may be in flight, each with its own list and staging.
// The cache rows and the list of rows read in place are read by the
// gathers issued right after the split, in op order, and so are shared.
type scratch struct {
	cap, stageRows int
	unit           backend.Buffer // I32 [2] device: 0, 1 (the list count's copy)
	cached         backend.Buffer // I32 [cap] device: each position's cache row
	place          backend.Buffer // I32 [2·cap] device: the positions read in place, each with its host tier code
	placeN         backend.Buffer // I32 [1] device: place's entries
	sites          []*site
	watcher        *watcher // places the ring sites' gathers (disk_watch.go); nil without a ring
}

// site is the host's side of a gather: its list, its staging and the
// host function's tables, and for a gather started ahead what its Land
// ends.
type site struct {
	listN                  backend.Buffer  // I32 [1] device: the entries listed
	listed                 []int32         // [2] mapped (listedB): listN's copy; a ring site's word (disk_watch.go)
	list                   []int32         // [2·cap] mapped (listB): position, then vertex (a row on disk) or host code (StageHost); the host's answer
	stage                  any             // dt [(stageRows+1)·dim] mapped (stageB): the disk rows (and host tier rows, StageHost)
	listedB, listB, stageB backend.Buffer  //
	disk                   []diskRow       // [stageRows] room: the disk rows of the current gather from its start, the host tier rows to copy (StageHost) from its end
	seen                   map[int32]int32 // a row's staging row during a gather (a disk vertex's, or a host code's), made for stageRows
	keys                   []int32         // seen's keys, which forget deletes one by one: clearing a map walks all its room

	// A gather started ahead: the store's watching goroutine places it
	// when the word (state, listed[1]) says so; Land waits for the word
	// and issues the rest with the start's arguments.
	state   backend.Buffer // I32 [1]: listedB's second word
	started bool
	n       backend.Count
	out     backend.Buffer
}

// diskRow is a row to read: vertex v into row pos.
type diskRow struct{ v, pos int32 }

// newScratch allocates the scratch of gathers of up to capacity rows, of
// which up to stageRows staged, with sites sites.
func (d *Disk) newScratch(capacity, stageRows, sites int) (*scratch, error) {
	s := &scratch{cap: capacity, stageRows: stageRows}
	var err error
	up := func(dst *backend.Buffer, data any, mapped bool) {
		if err != nil {
			return
		}
		if mapped {
			*dst, err = backend.UploadHost(d.be, data)
		} else {
			*dst, err = d.be.Upload(data)
		}
	}
	up(&s.unit, []int32{0, 1}, false)
	up(&s.cached, make([]int32, capacity), false) // each its own slice: the CPU backend's buffer is the slice
	up(&s.place, make([]int32, 2*capacity), false)
	up(&s.placeN, []int32{0}, false)
	for range sites {
		t := &site{listed: make([]int32, 2), list: make([]int32, 2*capacity), stage: newHostRows(d.dt, stageRows+1, d.dim),
			disk: make([]diskRow, stageRows), seen: make(map[int32]int32, stageRows), keys: make([]int32, 0, stageRows)}
		s.sites = append(s.sites, t)
		up(&t.listN, []int32{0}, false)
		up(&t.listedB, t.listed, true)
		if err == nil {
			t.state = d.be.View(t.listedB, 1, 1)
		}
		up(&t.listB, t.list, true)
		up(&t.stageB, t.stage, true)
	}
	if err != nil {
		s.free(d.be)
		return nil, fmt.Errorf("featstore: disk tier scratch of %d rows (%d staged, %d sites): %w", capacity, stageRows, sites, err)
	}
	return s, nil
}

// free stops the goroutine that places gathers started ahead (once its
// placing, if any, is done: it writes the staging), then releases the
// scratch. It waits for the backend's work first: a Land still queued
// (a run cut short) waits on the device for the goroutine's placing.
func (s *scratch) free(be backend.Backend) {
	if s.watcher != nil {
		_ = be.Sync() // its error is the run's, reported there
		s.watcher.end()
	}
	bufs := []backend.Buffer{s.unit, s.cached, s.place, s.placeN}
	for _, t := range s.sites {
		bufs = append(bufs, t.listN, t.listedB, t.listB, t.stageB)
	}
	for _, b := range bufs {
		if b != nil {
			be.Free(b)
		}
	}
	*s = scratch{}
}

// deviceBytes is the scratch's device memory.
func (s *scratch) deviceBytes() int64 {
	return int64(3*s.cap+3+len(s.sites)) * 4
}

// newRows is host room for n rows of width dim of dt (F32 or BF16).
func newRows(dt backend.DType, n, dim int) any {
	if dt == backend.BF16 {
		return make([]uint16, n*dim)
	}
	return make([]float32, n*dim)
}

// newHostRows is newRows for a table the host's cores read or write at
// random rows (the host tier, the staging): on 2 MiB pages where the
// kernel gives them (adviseHuge).
func newHostRows(dt backend.DType, n, dim int) any {
	rows := newRows(dt, n, dim)
	adviseHuge(rows)
	return rows
}

// putFileRow writes a row of the file's bytes (little-endian values of
// ft) into row i of dst, converted to dst's type as table.put converts.
func putFileRow(dst any, i, dim int, row []byte, ft backend.DType) {
	switch o := dst.(type) {
	case []float32:
		if ft == backend.F32 {
			copy(o[i*dim:(i+1)*dim], unsafe.Slice((*float32)(unsafe.Pointer(&row[0])), dim))
		} else {
			convert(o[i*dim:(i+1)*dim], unsafe.Slice((*uint16)(unsafe.Pointer(&row[0])), dim), backend.BF16Float)
		}
	case []uint16:
		if ft == backend.BF16 {
			copy(o[i*dim:(i+1)*dim], unsafe.Slice((*uint16)(unsafe.Pointer(&row[0])), dim))
		} else {
			convert(o[i*dim:(i+1)*dim], unsafe.Slice((*float32)(unsafe.Pointer(&row[0])), dim), backend.BF16Bits)
		}
	}
}

// remember gives key staging row k in seen until the next forget.
func (s *site) remember(key, k int32) {
	s.seen[key] = k
	s.keys = append(s.keys, key)
}

// forget empties seen, a key at a time: a gather puts at most a key per
// staging row, and clear would pass over the room of all of them (0.6 ms a
// gather for 300,000 rows of staging).
func (s *site) forget() {
	for _, k := range s.keys {
		delete(s.seen, k)
	}
	s.keys = s.keys[:0]
}

package featstore

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/fanout-gnn/fanout/backend"
)

// scratch is what the gathers of a Disk store share (they run one after
// another, in op order): host memory the device reads and writes in
// place, sized by Reserve for gathers of up to cap rows, of which up to
// stageRows staged (from disk; with StageHost, from the host tier too).
type scratch struct {
	cap, stageRows                     int
	hostSkip                           int32          // rh's row that is skipped: the host tier's last, or with StageHost the staging's
	iota                               backend.Buffer // I32 [cap] device: 0, 1, ...
	unit                               backend.Buffer // I32 [2] device: 0, 1 (the count's copy)
	live                               []int32        // [1] mapped (liveB): the gather's count, as the device holds it
	ids                                []int32        // [cap] mapped (idsB): the step's ids, the first live of them written
	rc                                 []int32        // [cap] mapped (rcB): the id's code as the device wrote it (cache row, or <= -1 outside the cache), 0 once placed outside the cache
	rh                                 []int32        // [cap] mapped (rhB): host tier row (StageHost: its staging row), else hostSkip
	rd                                 []int32        // [cap] mapped (rdB): staging row, else stageRows (skipped)
	stage                              any            // dt [(stageRows+1)·dim] mapped (stageB): the disk rows (and host tier rows, StageHost)
	slotS                              backend.Buffer // I32 [stageRows+1] device: -1 but the last, 0
	liveB, idsB, rcB, rhB, rdB, stageB backend.Buffer
	disk                               []diskRow       // [stageRows] room: the disk rows of the current gather (StageHost: its host rows to copy at the end)
	parts                              []placePart     // the placing goroutines' shares (disk_place.go)
	hostPos                            []int32         // [cap]: the parts' host positions, a share's at its positions
	diskPos                            []diskRow       // [cap]: the parts' disk rows, likewise
	seen                               map[int32]int32 // a disk vertex's staging row during a merge, made for stageRows
	keys                               []int32         // seen's keys, which forget deletes one by one: clearing a map walks all its room
}

// diskRow is a row to read: vertex v into row pos.
type diskRow struct{ v, pos int32 }

// newScratch allocates the scratch of gathers of up to capacity rows, of
// which up to stageRows staged, beside a host tier of hostRows rows:
// rh and rd start as the rows that are skipped, which place restores
// after each gather.
func (d *Disk) newScratch(capacity, stageRows, hostRows int) (*scratch, error) {
	skip := int32(hostRows)
	if d.cfg.StageHost {
		skip = int32(stageRows)
	}
	s := &scratch{cap: capacity, stageRows: stageRows, hostSkip: skip, live: make([]int32, 1), ids: make([]int32, capacity), rc: make([]int32, capacity),
		rh: slices.Repeat([]int32{skip}, capacity), rd: slices.Repeat([]int32{int32(stageRows)}, capacity), stage: newHostRows(d.dt, stageRows+1, d.dim),
		disk: make([]diskRow, 0, stageRows), hostPos: make([]int32, capacity), diskPos: make([]diskRow, capacity),
		seen: make(map[int32]int32, stageRows), keys: make([]int32, 0, stageRows)}
	iota := make([]int32, capacity)
	for i := range iota {
		iota[i] = int32(i)
	}
	skipS := slotTable(int64(stageRows+1), nil)
	skipS[stageRows] = 0
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
	up(&s.iota, iota, false)
	up(&s.unit, []int32{0, 1}, false)
	up(&s.liveB, s.live, true)
	up(&s.slotS, skipS, false)
	up(&s.idsB, s.ids, true)
	up(&s.rcB, s.rc, true)
	up(&s.rhB, s.rh, true)
	up(&s.rdB, s.rd, true)
	up(&s.stageB, s.stage, true)
	if err != nil {
		s.free(d.be)
		return nil, fmt.Errorf("featstore: disk tier scratch of %d rows (%d staged): %w", capacity, stageRows, err)
	}
	return s, nil
}

func (s *scratch) free(be backend.Backend) {
	for _, b := range []backend.Buffer{s.iota, s.unit, s.slotS, s.liveB, s.idsB, s.rcB, s.rhB, s.rdB, s.stageB} {
		if b != nil {
			be.Free(b)
		}
	}
	*s = scratch{}
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
func (s *scratch) remember(key, k int32) {
	s.seen[key] = k
	s.keys = append(s.keys, key)
}

// forget empties seen, a key at a time: a gather puts at most a key per
// staging row, and clear would pass over the room of all of them (0.6 ms a
// gather for 300,000 rows of staging).
func (s *scratch) forget() {
	for _, k := range s.keys {
		delete(s.seen, k)
	}
	s.keys = s.keys[:0]
}

package featstore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
)

// placed is what a gather's host function left: the cache, host tier and
// staging rows of the live ids, the rows read (vertex into staging row)
// and the staging's values.
type placed struct {
	rc, rh, rd []int32
	disk       []diskRow
	stage      []float32
}

// TestDiskPlaceWorkers: gathers of 100k ids (90% cached, 6% in the host
// tier, 4% on disk, with repeats) through one store placed by one
// goroutine and through one placed by five give bit for bit the same
// cache, host and staging rows of each id and the same staging layout;
// those rows are the ones the ranking says (a disk vertex's staging row
// the order of its first appearance, a repeat the same row), the rows
// gathered are the table's, and a second gather of other ids at the same
// positions (fewer of them) is placed as afresh. So with the host tier's
// rows staged too (StageHost: the staging has a row for every id outside
// the cache, so each host tier id takes the next staging row in the order
// of the ids, and the disk rows follow them).
func TestDiskPlaceWorkers(t *testing.T) {
	for _, stage := range []bool{false, true} {
		t.Run(fmt.Sprint("stage-host=", stage), func(t *testing.T) { checkPlaceWorkers(t, stage) })
	}
}

func checkPlaceWorkers(t *testing.T, stageHost bool) {
	const rows, dim, n = 1 << 17, 3, 100_000
	var runs [2][]placed
	for k, workers := range []int{1, 5} {
		be := cpu.New(2)
		d, feat := benchDisk(t, be, rows, dim, rows/2, rows/8, n, stageHost)
		d.workers = workers
		ids := tierIDs(d, n, 900, 60)
		for g, live := range []int{n, n / 3} {
			gid := append(slices.Clone(ids[7*g:]), ids[:7*g]...)
			got := gatherAll(t, be, d, gid[:live])
			if want := rowsOf(feat, dim, gid[:live]); !slices.Equal(got, want) {
				t.Fatalf("%d goroutines, gather %d: rows differ from the table's", workers, g)
			}
			s := d.sc
			p := placed{rc: slices.Clone(s.rc[:live]), rh: slices.Clone(s.rh[:live]), rd: slices.Clone(s.rd[:live]),
				disk: slices.Clone(s.disk), stage: slices.Clone(s.stage.([]float32))}
			checkPlaced(t, fmt.Sprintf("%d goroutines, gather %d", workers, g), d, gid[:live], p)
			runs[k] = append(runs[k], p)
		}
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		d.Free()
	}
	for g := range runs[0] {
		a, b := runs[0][g], runs[1][g]
		if !slices.Equal(a.rc, b.rc) || !slices.Equal(a.rh, b.rh) || !slices.Equal(a.rd, b.rd) ||
			!slices.Equal(a.disk, b.disk) || !slices.Equal(a.stage, b.stage) {
			t.Errorf("gather %d: one goroutine and five placed the ids differently", g)
		}
	}
}

// checkPlaced checks p against the tiers of d's ranking: a cached id's
// cache row (the cache's rows its vertices by id), a host tier id's row
// (with StageHost, its staging row: the next in the order of the ids), a
// disk id's staging row in the order of first appearance (after the host
// tier's with StageHost), and the skipped rows elsewhere.
func checkPlaced(t *testing.T, name string, d *Disk, ids []int32, p placed) {
	t.Helper()
	rank := make([]int32, d.rows)
	for i, v := range d.order {
		rank[v] = int32(i)
	}
	c, h, stage := int32(d.CachedRows()), int32(d.HostRows()), map[int32]int32{}
	// The cache's rows are its vertices by id (byVertex).
	slot := make([]int32, d.rows)
	for i, v := range byVertex(d.order[:c]) {
		slot[v] = int32(i)
	}
	staged, skipH, base, next := d.cfg.StageHost, h, int32(0), int32(0)
	if staged {
		skipH = int32(d.sc.stageRows)
		for _, v := range ids {
			if r := rank[v]; r >= c && r < c+h {
				base++
			}
		}
	}
	var disk []diskRow
	for i, v := range ids {
		wc, wh, wd := int32(0), skipH, int32(d.sc.stageRows)
		switch r := rank[v]; {
		case r < c:
			wc = slot[v]
		case r < c+h && !staged:
			wh = r - c
		case r < c+h:
			wh, next = next, next+1
		default:
			k, ok := stage[v]
			if !ok {
				k = base + int32(len(stage))
				stage[v] = k
				disk = append(disk, diskRow{v: v, pos: k})
			}
			wd = k
		}
		if p.rc[i] != wc || p.rh[i] != wh || p.rd[i] != wd {
			t.Fatalf("%s: id %d (vertex %d, rank %d): rows %d, %d, %d, want %d, %d, %d", name, i, v, rank[v], p.rc[i], p.rh[i], p.rd[i], wc, wh, wd)
		}
	}
	slices.SortFunc(disk, func(a, b diskRow) int { return int(a.v) - int(b.v) })
	if len(disk) == 0 || !slices.Equal(p.disk, disk) {
		t.Fatalf("%s: %d disk rows read, want %d in the order of first appearance", name, len(p.disk), len(disk))
	}
}

package featstore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestDiskPlace: gathers of 100k ids (90% cached, 6% in the host tier, 4%
// on disk, with repeats) give the table's rows, each position's rows
// are the ones the ranking says: a cached id its cache row, a host tier
// id its host tier row (with StageHost, a staging row of its own holding
// that row, but for the host tier's first InPlaceRows), a disk id a
// staging row holding its row, the same row for every repeat of a vertex
// and distinct rows for distinct vertices, each read once; a second
// gather of other ids at the same positions (fewer of them) is placed as
// afresh; the rows by tier count each position in its tier. With one
// copying goroutine and with five the rows are the same.
func TestDiskPlace(t *testing.T) {
	for _, c := range []struct {
		stage   bool
		inPlace int64
	}{{false, 0}, {true, 0}, {true, 1 << 13}} {
		for _, workers := range []int{1, 5} {
			t.Run(fmt.Sprintf("stage-host=%t/in-place=%d/workers=%d", c.stage, c.inPlace, workers), func(t *testing.T) { checkPlace(t, c.stage, c.inPlace, workers) })
		}
	}
}

func checkPlace(t *testing.T, stageHost bool, inPlace int64, workers int) {
	const rows, dim, n = 1 << 17, 3, 100_000
	be := cpu.New(2)
	d, feat := benchDisk(t, be, rows, dim, rows/2, rows/8, n, stageHost)
	defer d.Free()
	d.workers = workers
	d.cfg.InPlaceRows = inPlace
	ids := tierIDs(d, n, 900, 60)
	for g, live := range []int{n, n / 3} {
		gid := append(slices.Clone(ids[7*g:]), ids[:7*g]...)[:live]
		got := gatherAll(t, be, d, gid)
		if want := rowsOf(feat, dim, gid); !slices.Equal(got, want) {
			t.Fatalf("gather %d: rows differ from the table's", g)
		}
		checkPlaced(t, fmt.Sprint("gather ", g), d, feat, gid)
	}
	var want [3]int64 // positions by tier over both gathers
	rank := make([]int32, d.rows)
	for i, v := range d.order {
		rank[v] = int32(i)
	}
	for g, live := range []int{n, n / 3} {
		for _, v := range append(slices.Clone(ids[7*g:]), ids[:7*g]...)[:live] {
			switch r := int(rank[v]); {
			case r < d.CachedRows():
				want[0]++
			case r < d.CachedRows()+d.HostRows():
				want[1]++
			default:
				want[2]++
			}
		}
	}
	if c, h, k, err := d.TierStats(); err != nil || [3]int64{c, h, k} != want {
		t.Fatalf("rows by tier %d, %d, %d (%v), want %v", c, h, k, err, want)
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
}

// checkPlaced checks the scratch's rows of the live ids against the tiers
// of d's ranking, and the staging's rows against the table feat.
func checkPlaced(t *testing.T, name string, d *Disk, feat []float32, ids []int32) {
	t.Helper()
	s, dim := d.sc, d.dim
	rank := make([]int32, d.rows)
	for i, v := range d.order {
		rank[v] = int32(i)
	}
	rc, rh, rd := int32s(t, d, s.cached, len(ids)), inPlaceRows(t, d, len(ids)), stagedRows(s, len(ids))
	c, h := int32(d.CachedRows()), int32(d.HostRows())
	slot := make([]int32, d.rows) // the cache's rows are its vertices by id (byVertex)
	for i, v := range byVertex(d.order[:c]) {
		slot[v] = int32(i)
	}
	stage := s.sites[0].stage.([]float32)
	staged := func(k int32, v int32) bool {
		return k >= 0 && int(k) < s.stageRows && slices.Equal(stage[int(k)*dim:int(k+1)*dim], feat[int(v)*dim:int(v+1)*dim])
	}
	diskRows, hostRows := map[int32]int32{}, map[int32]bool{}
	for i, v := range ids {
		bad := func(what string) {
			t.Fatalf("%s: position %d (vertex %d, rank %d): %s (rows %d, %d, %d)", name, i, v, rank[v], what, rc[i], rh[i], rd[i])
		}
		wantC := int32(0)
		switch r := rank[v]; {
		case r < c:
			wantC = slot[v]
			if rh[i] != int32(d.hostRows) || rd[i] != int32(s.stageRows) {
				bad("a cached id has a host or staging row")
			}
		case r < c+h && int(r-c) < d.stageFrom():
			if rh[i] != r-c || rd[i] != int32(s.stageRows) {
				bad("a host tier id read in place is not at its host tier row")
			}
		case r < c+h:
			if rh[i] != int32(d.hostRows) || !staged(rd[i], v) || hostRows[rd[i]] {
				bad("a staged host tier id's staging row does not hold its row, or another's")
			}
			hostRows[rd[i]] = true
		default:
			if rh[i] != int32(d.hostRows) || !staged(rd[i], v) {
				bad("a disk id's staging row does not hold its row")
			}
			if k, ok := diskRows[v]; ok && k != rd[i] {
				bad("a repeated disk vertex has two staging rows")
			}
			diskRows[v] = rd[i]
		}
		if rc[i] != wantC {
			bad("the cache row is wrong")
		}
	}
	distinct := map[int32]bool{}
	for _, k := range diskRows {
		if distinct[k] || hostRows[k] {
			t.Fatalf("%s: staging row %d holds two rows", name, k)
		}
		distinct[k] = true
	}
	if len(diskRows) == 0 || len(s.sites[0].disk) != len(diskRows) {
		t.Fatalf("%s: %d disk rows read, want %d distinct", name, len(s.sites[0].disk), len(diskRows))
	}
}

// stagedRows is each of n positions' staging row as the answered list of
// the scratch's whole gather names it (GatherListed reads the list), the
// staging's skip where it names none.
func stagedRows(s *scratch, n int) []int32 {
	rd := make([]int32, n)
	for i := range rd {
		rd[i] = int32(s.stageRows)
	}
	t := s.sites[0]
	for j := range int(t.listed[0]) {
		if i, x := t.list[2*j], t.list[2*j+1]; x >= 0 {
			rd[i] = x
		}
	}
	return rd
}

// inPlaceRows is each of n positions' host tier row as the scratch's list
// of rows read in place names it (GatherListed reads the list), the host
// tier's row count where it names none.
func inPlaceRows(t *testing.T, d *Disk, n int) []int32 {
	t.Helper()
	s := d.sc
	rh := make([]int32, n)
	for i := range rh {
		rh[i] = int32(d.hostRows)
	}
	m := int(int32s(t, d, s.placeN, 1)[0])
	list := int32s(t, d, s.place, 2*m)
	for j := range m {
		if i, x := list[2*j], list[2*j+1]; rh[i] != int32(d.hostRows) || x > -2 {
			t.Fatalf("position %d listed in place twice, or with code %d", i, x)
		} else {
			rh[i] = -2 - x
		}
	}
	return rh
}

// int32s reads the first n values of d's I32 buffer b.
func int32s(t *testing.T, d *Disk, b backend.Buffer, n int) []int32 {
	t.Helper()
	out := make([]int32, n)
	d.be.Read(out, b, 0)
	if err := d.be.Sync(); err != nil {
		t.Fatal(err)
	}
	return out
}

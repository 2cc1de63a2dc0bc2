package featstore

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// aheadGather is a gather issued into rows of its own, read back later.
type aheadGather struct {
	ids []int32
	out backend.Buffer
}

// issue issues d.Gather of ids into fresh NaN rows.
func issue(t *testing.T, be backend.Backend, d *Disk, ids []int32) aheadGather {
	t.Helper()
	idb, err1 := be.Upload(slices.Clone(ids))
	cnt, err2 := be.Upload([]int32{int32(len(ids))})
	out, err3 := be.Alloc(backend.F32, len(ids)*d.dim)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	be.Fill(out, math.NaN())
	d.Gather(idb, backend.Count{Buf: cnt, Cap: len(ids)}, out)
	return aheadGather{ids: ids, out: out}
}

// rows reads g's rows back.
func (g aheadGather) rows(t *testing.T, be backend.Backend, dim int) []float32 {
	t.Helper()
	got := make([]float32, len(g.ids)*dim)
	be.Read(got, g.out, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestDiskAhead: with a lookahead of two, gathers started into sites 0, 1
// and 2 (the host tier's first rows read in place, the rest staged, some
// rows on disk) write the rows the device holds (the cache's and those
// read in place) at the start and none the host fetches until each is
// landed, and each Land writes its own gather's rows, the table's, though
// the starts of later gathers and a whole gather (into a site of its own)
// were issued in between; a site started again before its Land lands the
// later gather. A Land of a site never started and a site past the ring
// are errors.
func TestDiskAhead(t *testing.T) {
	const rows, dim, n = 1 << 15, 3, 5000
	be := cpu.New(2)
	feat, order := randomTable(rows, dim)
	d, err := NewDisk(be, DiskConfig{File: fileOf(feat, dim), FileType: backend.F32, HostRows: rows / 4, StageHost: true, InPlaceRows: rows / 16}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	d.SetLookahead(2)
	if !d.Remote() || d.Lookahead() != 2 {
		t.Fatalf("SetLookahead(2): Remote %t, Lookahead %d", d.Remote(), d.Lookahead())
	}
	d.Reserve(n)
	if err := d.Fill(rows / 4); err != nil {
		t.Fatal(err)
	}
	if u, p := d.HostUse(), d.PlanHost(rows/4, rows/4); u != p || u.Staging != 4*(u.StageRows+1)*int64(dim)*4 {
		t.Fatalf("host memory %+v, planned %+v: want the staging of four sites", u, p)
	}
	ids := tierIDs(d, 4*n, 500, 300)
	want := func(g aheadGather) []float32 { return rowsOf(feat, dim, g.ids) }
	started := func(name string, g aheadGather) {
		t.Helper()
		got, all := g.rows(t, be, dim), want(g)
		var kinds [2]int // positions of rows the device holds, and of rows the host fetches
		for i, v := range g.ids {
			row, wantRow := got[i*dim:(i+1)*dim], all[i*dim:(i+1)*dim]
			c := d.tier[v]
			if c >= 0 || (c <= -2 && int(-2-c) < d.stageFrom()) {
				kinds[0]++
				if !slices.Equal(row, wantRow) {
					t.Fatalf("%s: position %d (code %d): a row the device holds not written at the start", name, i, c)
				}
				continue
			}
			kinds[1]++
			if slices.Equal(row, wantRow) { // the start may have written another row there
				t.Fatalf("%s: position %d (code %d): a row the host fetches written before the Land", name, i, c)
			}
		}
		if kinds[0] == 0 || kinds[1] == 0 {
			t.Fatalf("%s: %v positions of the device's and the host's rows: the case tests too little", name, kinds)
		}
	}
	landed := func(name string, g aheadGather) {
		t.Helper()
		if got := g.rows(t, be, dim); !slices.Equal(got, want(g)) {
			t.Fatalf("%s: rows differ from the table's", name)
		}
	}
	start := func(k int, ids []int32) aheadGather {
		d.AheadSite(k)
		defer d.AheadSite(-1)
		return issue(t, be, d, ids)
	}
	g0, g1 := start(0, ids[:n]), start(1, ids[n:2*n])
	started("site 0", g0)
	d.Land(0)
	landed("site 0", g0)
	g2 := start(2, ids[2*n:3*n])
	whole := issue(t, be, d, ids[3*n:])
	landed("a whole gather between", whole)
	started("site 1", g1)
	started("site 2", g2)
	d.Land(1)
	landed("site 1", g1)
	superseded := start(2, ids[n/2:n/2+n]) // site 2 again, never landed before
	d.Land(2)
	landed("site 2 started again", superseded)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	d.AheadSite(3)
	if err := d.Err(); err == nil || !strings.Contains(err.Error(), "site 3") {
		t.Fatalf("AheadSite past the ring: %v", err)
	}
	fresh, _ := NewDisk(be, DiskConfig{File: fileOf(feat, dim), FileType: backend.F32, HostRows: rows / 4}, rows, dim, order, 0)
	defer fresh.Free()
	fresh.SetLookahead(2)
	fresh.Reserve(n)
	if err := fresh.Fill(0); err != nil {
		t.Fatal(err)
	}
	fresh.Land(1)
	if err := fresh.Err(); err == nil || !strings.Contains(err.Error(), "Land(1)") {
		t.Fatalf("Land of a site never started: %v", err)
	}
}

// hostFuncCounter is a CPU backend that counts its host functions.
type hostFuncCounter struct {
	*cpu.Backend
	n int
}

func (h *hostFuncCounter) HostFunc(fn func()) {
	h.n++
	h.Backend.HostFunc(fn)
}

// TestDiskAheadNoHostFunc: a gather started ahead and its Land issue no
// host function (the site's word hands the gather to the store's
// watching goroutine and back, AwaitHost), where a whole gather issues
// one; Free stops the goroutine, a started gather never landed too.
func TestDiskAheadNoHostFunc(t *testing.T) {
	const rows, dim, n = 1 << 12, 3, 300
	be := &hostFuncCounter{Backend: cpu.New(1)}
	feat, order := randomTable(rows, dim)
	d, err := NewDisk(be, DiskConfig{File: fileOf(feat, dim), FileType: backend.F32, HostRows: rows / 4, StageHost: true, InPlaceRows: rows / 16}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.SetLookahead(2)
	d.Reserve(n)
	if err := d.Fill(rows / 4); err != nil {
		t.Fatal(err)
	}
	ids := tierIDs(d, 2*n, 500, 300)
	d.AheadSite(1)
	g := issue(t, be, d, ids[:n])
	d.AheadSite(-1)
	d.Land(1)
	if got := g.rows(t, be, dim); !slices.Equal(got, rowsOf(feat, dim, g.ids)) || be.n != 0 {
		t.Fatalf("a gather started ahead and landed: rows the table's %t, %d host functions (want 0)", slices.Equal(got, rowsOf(feat, dim, g.ids)), be.n)
	}
	issue(t, be, d, ids[n:])
	if be.n != 1 {
		t.Fatalf("a whole gather issued %d host functions, want 1", be.n)
	}
	d.AheadSite(2) // a start never landed, as a run cut short leaves
	issue(t, be, d, ids[n:])
	d.AheadSite(-1)
	watcher := d.sc.watcher
	d.Free()
	select {
	case <-watcher.done:
	default:
		t.Fatal("Free left the watching goroutine running")
	}
}

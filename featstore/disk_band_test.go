package featstore

import (
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestDiskAheadBand: with DeviceStaging, a gather started ahead copies
// its staging's first rows into its site's band (the host tier's staged
// rows and the disk's, more of them than the band holds), and its Land
// reads those from the band: the staging's first rows poisoned after the
// host's work, the landed rows are still the table's. A whole gather has
// no band. The bands are the device memory PlanDevice said, and
// DeviceBytes counts them.
func TestDiskAheadBand(t *testing.T) {
	const rows, dim, n, band = 1 << 15, 3, 5000, 1000
	be := cpu.New(2)
	feat, order := randomTable(rows, dim)
	cfg := DiskConfig{File: fileOf(feat, dim), FileType: backend.F32, HostRows: rows / 4, StageHost: true, DeviceStaging: band * dim * 4}
	d, err := NewDisk(be, cfg, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	d.SetLookahead(2)
	d.Reserve(n)
	plan := d.PlanDevice()
	before := d.DeviceBytes()
	if err := d.Fill(rows / 4); err != nil {
		t.Fatal(err)
	}
	if want := int64(3 * band * dim * 4); plan != want {
		t.Fatalf("PlanDevice %d bytes, want three bands of %d rows (%d)", plan, band, want)
	}
	if s := d.sc; s.bandRows != band || s.sites[0].band != nil || s.sites[1].band == nil || s.sites[3].band == nil {
		t.Fatalf("bands of %d rows (want %d), on the ring's sites only", s.bandRows, band)
	}
	ids := tierIDs(d, 2*n, 500, 300)
	start := func(k int, ids []int32) aheadGather {
		d.AheadSite(k)
		defer d.AheadSite(-1)
		return issue(t, be, d, ids)
	}
	for k := range 3 {
		g := start(k, ids[k*n/2:k*n/2+n])
		site := d.sc.sites[1+k]
		<-site.done
		stage := site.stage.([]float32)
		listed := int(site.listed[0])
		if listed <= band {
			t.Fatalf("site %d: %d rows staged, want more than the band's %d", k, listed, band)
		}
		bandRows := make([]float32, band*dim)
		be.Read(bandRows, site.band, 0)
		if !slices.Equal(bandRows, stage[:band*dim]) {
			t.Fatalf("site %d: the band differs from the staging's first %d rows", k, band)
		}
		for i := range band * dim {
			stage[i] = float32(math.NaN())
		}
		d.Land(k)
		if got := g.rows(t, be, dim); !slices.Equal(got, rowsOf(feat, dim, g.ids)) {
			t.Fatalf("site %d: landed rows differ from the table's", k)
		}
	}
	whole := issue(t, be, d, ids[n:])
	if got := whole.rows(t, be, dim); !slices.Equal(got, rowsOf(feat, dim, whole.ids)) {
		t.Fatal("a whole gather's rows differ from the table's")
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if grew := d.DeviceBytes() - before; grew < plan {
		t.Fatalf("DeviceBytes grew by %d bytes in Fill, under the bands' %d", grew, plan)
	}
}

// TestDiskBandOff: without a lookahead, DeviceStaging makes no band.
func TestDiskBandOff(t *testing.T) {
	const rows, dim = 1 << 12, 3
	be := cpu.New(1)
	feat, order := randomTable(rows, dim)
	d, err := NewDisk(be, DiskConfig{File: fileOf(feat, dim), FileType: backend.F32, HostRows: rows / 4, DeviceStaging: 1 << 20}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	d.Reserve(500)
	if err := d.Fill(rows / 4); err != nil {
		t.Fatal(err)
	}
	if d.PlanDevice() != 0 || d.sc.bandRows != 0 || d.sc.slotB != nil {
		t.Fatalf("no lookahead: PlanDevice %d, band of %d rows", d.PlanDevice(), d.sc.bandRows)
	}
}

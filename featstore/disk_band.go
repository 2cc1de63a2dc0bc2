package featstore

import "fmt"

// Device staging (DiskConfig.DeviceStaging): each site of the driver's
// ring (SetLookahead) has a band of device memory for its staging's first
// rows. The goroutine that fills a started gather's staging then copies
// its first rows there by a copy engine (backend.HostCopier), beside the
// steps in between, and the Land's gather reads them from device memory
// instead of over PCIe in the step; staging rows past the band are read
// in place. A whole gather (sites[0], in op order) reads its staging in
// place: a copy in its step would only add to the step.

// bandRowsFor is the rows of a ring site's device band beside a staging
// of stageRows rows: DeviceStaging's rows, at most the staging's; 0
// without a lookahead or a copier.
func (d *Disk) bandRowsFor(stageRows int) int {
	if d.lookahead < 2 || d.copier == nil || d.cfg.DeviceStaging <= 0 {
		return 0
	}
	return int(min(int64(stageRows), d.cfg.DeviceStaging/d.rowBytes()))
}

// PlanDevice is the device memory of the ring sites' bands Fill makes
// (at most; a staging smaller than Reserve's rows takes a smaller band),
// which a budget places beside the cache.
func (d *Disk) PlanDevice() int64 {
	rows := d.bandRowsFor(int(min(int64(d.reserve), d.rows)))
	return int64(d.lookahead+1) * int64(rows) * d.rowBytes()
}

// bandSlots is the staging's slot table for a gather of a site with a
// band of b rows (GatherTieredMisses): staging row r < b read from the
// band's row r (code -2-r), the rest from the staging in place (-1), the
// last row (stageRows, the answer no entry got) not read (0).
func bandSlots(stageRows, b int) []int32 {
	slot := slotTable(int64(stageRows+1), nil)
	for r := range b {
		slot[r] = hostCode(r)
	}
	slot[stageRows] = 0
	return slot
}

// copyBand copies the first of t's used staging rows, as many as its band
// holds, into the band, once the host has written them; a failed copy is
// the store's failure (Err), the band's rows left as they were.
func (d *Disk) copyBand(s *scratch, t *site, used int) {
	k := min(used, s.bandRows)
	if t.band == nil || k <= 0 {
		return
	}
	if err := d.copier.CopyIn(t.band, 0, t.stageB, 0, k*d.dim); err != nil {
		d.fail(fmt.Errorf("featstore: disk tier: staged rows to the device: %w", err))
	}
}

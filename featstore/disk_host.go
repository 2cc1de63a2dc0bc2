package featstore

// HostUse is a disk store's host memory by part, in bytes: what a budget
// of host memory for the disk tier has to hold.
type HostUse struct {
	HostRows  int64 // rows in the host tier
	StageRows int64 // rows of one gather's staging
	HostTier  int64 // the host tier: HostRows rows and the one row no id reads
	Staging   int64 // the staging of each site: StageRows rows and the one row no id reads
	// Tables are the rest: a code per vertex (4 bytes); per site, per row
	// of a gather (Reserve's) its entry of the list the device writes,
	// mapped (8 bytes), the list's count and the site's word (8 bytes),
	// per staging row the row to read or, with StageHost, to copy from
	// the host tier (8 bytes), its key (4 bytes) and its entry in the map
	// of repeats (mapEntryBytes); and the readers' buffers
	// (readBufBytes).
	Tables int64
}

// Total is the host memory of every part.
func (u HostUse) Total() int64 { return u.HostTier + u.Staging + u.Tables }

// Add is u and v summed (several stores under one budget).
func (u HostUse) Add(v HostUse) HostUse {
	return HostUse{u.HostRows + v.HostRows, u.StageRows + v.StageRows, u.HostTier + v.HostTier, u.Staging + v.Staging, u.Tables + v.Tables}
}

// mapEntryBytes bounds what an entry of a Go map of int32 to int32 made
// for its entries takes: 8 bytes of key and value, a control byte per
// slot and slots left free by the groups' load factor.
const mapEntryBytes = 16

// rowBytes is one row as the cache and host tier hold it.
func (d *Disk) rowBytes() int64 { return int64(d.dim) * int64(d.dt.Size()) }

// readers is the goroutines that read rows at once.
func (d *Disk) readers() int {
	if d.cfg.Readers <= 0 {
		return 16
	}
	return d.cfg.Readers
}

// clip is cached and host rows as Fill clips them to the ranking.
func (d *Disk) clip(cached int, host int64) (int, int) {
	cached = max(0, min(cached, len(d.order)))
	return cached, int(max(0, min(host, int64(len(d.order)-cached))))
}

// stageRowsFor is the staging of gathers of Reserve's rows beside cached
// rows in the cache and h in the host tier: Reserve's rows, or the rows
// it may take where they are fewer: those left on disk, or with
// StageHost every row outside the cache.
func (d *Disk) stageRowsFor(cached, h int) int {
	staged := d.rows - int64(cached)
	if !d.cfg.StageHost {
		staged -= int64(h)
	}
	return int(max(0, min(int64(d.reserve), staged)))
}

// PlanHost is the host memory the store takes once Fill has put cached
// rows in the cache and host rows in the host tier (both clipped to the
// ranking as Fill clips them), for gathers of Reserve's rows. Fill makes
// exactly this (HostUse).
func (d *Disk) PlanHost(cached int, host int64) HostUse {
	cached, h := d.clip(cached, host)
	stage := int64(d.stageRowsFor(cached, h))
	rb, capacity, sites := d.rowBytes(), int64(d.reserve), int64(d.sites())
	return HostUse{HostRows: int64(h), StageRows: stage, HostTier: int64(h+1) * rb, Staging: sites * (stage + 1) * rb,
		Tables: d.rows*4 + sites*(8+capacity*8+stage*(12+mapEntryBytes)) + d.readBufBytes()}
}

// FitHost is the most host tier rows that, with cached rows in the cache,
// keep PlanHost's total within budget bytes; ok is false where even an
// empty host tier does not fit (the staging and tables alone exceed it).
// Each host tier row costs at most a row of bytes (it takes a row the
// staging would need once it is the last rows on disk; exactly a row with
// StageHost, whose staging does not depend on it), so the rows the
// budget leaves once PlanHost(cached, 0) is placed fit.
func (d *Disk) FitHost(budget int64, cached int) (rows int64, ok bool) {
	cached, all := d.clip(cached, d.rows)
	none := d.PlanHost(cached, 0).Total()
	switch {
	case none > budget:
		return 0, false
	case d.PlanHost(cached, int64(all)).Total() <= budget:
		return int64(all), true
	}
	return min(int64(all), (budget-none)/d.rowBytes()), true
}

// HostUse is the host memory the store holds, measured from its buffers
// (after Fill: PlanHost of its cached and host rows; before, its code
// table and a host tier of no rows).
func (d *Disk) HostUse() HostUse {
	u := HostUse{HostRows: int64(d.hostRows), HostTier: valuesBytes(d.hostData), Tables: int64(len(d.tier))*4 + int64(len(d.slab))}
	if s := d.sc; s != nil {
		u.StageRows = int64(s.stageRows)
		for _, t := range s.sites {
			u.Staging += valuesBytes(t.stage)
			u.Tables += int64(len(t.listed)+len(t.list))*4 + int64(cap(t.disk))*8
			u.Tables += int64(s.stageRows)*mapEntryBytes + int64(cap(t.keys))*4
		}
	}
	return u
}

// valuesBytes is the size of rows made by newRows.
func valuesBytes(rows any) int64 {
	switch r := rows.(type) {
	case []uint16:
		return int64(len(r)) * 2
	case []float32:
		return int64(len(r)) * 4
	}
	return 0
}

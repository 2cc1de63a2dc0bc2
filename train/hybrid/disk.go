package hybrid

import (
	"fmt"
	"io"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/sample"
	"github.com/fanout-gnn/fanout/train"
)

// TierStore is the store a Tier places: featstore.Tiered (a GPU cache and
// the whole table in host memory) or featstore.Disk (a GPU cache, a host
// tier of the rows ranked next, the rest read from the dataset's
// feat.npy).
type TierStore interface {
	featstore.Store
	featstore.InPlace
	// Fill fills the cache with the rows ranked first (and a disk store's
	// host tier with the rows ranked next); once, before a capture.
	Fill(rows int) error
	// Stats are the rows gathered from outside the cache, and all rows.
	Stats() (hostRows, rows int64, err error)
	ResetStats()
	CachedRows() int
}

// DiskTiers are the rows a disk store's tiers gave, and their bytes.
type DiskTiers struct {
	CacheRows  int64 `json:"cache_rows"`
	HostRows   int64 `json:"host_rows"`
	DiskRows   int64 `json:"disk_rows"`
	CacheBytes int64 `json:"cache_bytes"`
	HostBytes  int64 `json:"host_bytes"` // over PCIe from the host tier
	DiskBytes  int64 `json:"disk_bytes"` // read from the file (and over PCIe from staging)
	// Gathers is how many gathers the host placed (in a host function,
	// or for a gather started ahead on the watching goroutine), HostNanos
	// their wall time in all and PlaceNanos the part of it that placed the
	// ids (the rest copied staged rows and read the file).
	Gathers    int64 `json:"gathers"`
	HostNanos  int64 `json:"host_nanos"`
	PlaceNanos int64 `json:"place_nanos"`
}

// EpochTiers are one epoch's rows and bytes per tier (training and
// evaluation, read at the first step of the next epoch or at the end).
type EpochTiers struct {
	Epoch int `json:"epoch"` // 1-based, as train.EpochStats's
	DiskTiers
}

// newDiskStore makes the store of features left on disk (ds.FeatureFile),
// without a host tier until BeforeCapture sizes it under
// opt.HostMemory (hostRowsWithin), its rows fetched a step ahead where
// opt.FetchAhead says so (opt.Lookahead steps ahead, where >= 2).
func newDiskStore(be backend.Backend, ds *dataset.Dataset, order []int32, opt Options) (*featstore.Disk, error) {
	if opt.Hot.Ratio > 0 {
		return nil, fmt.Errorf("hot-ratio: the hot vertices' CPU reads the whole table in host memory, and %s's features are on disk; use --hot-ratio 0 or more --host-memory", ds.Name)
	}
	inPlace := int64(0)
	if opt.StageHost {
		// The rows a step misses most, read in place (as the tiered store's
		// band is), the host staging only the rest.
		inPlace = bandRows(opt.Band, DefaultStagedBand, int64(ds.FeatDim)*int64(diskDType(ds.FeatureFile, opt).Size()))
	}
	d, err := newDisk(be, ds.FeatureFile, order, 0, inPlace, opt)
	if err != nil {
		return nil, err
	}
	d.FetchAhead(opt.FetchAhead)
	d.SetLookahead(opt.Lookahead)
	return d, nil
}

// noStaging refuses Options.StageHost for ds, whose features are all in
// host memory: there is no disk tier, whose staging it fills.
func noStaging(ds *dataset.Dataset) error {
	return fmt.Errorf("stage-host-rows: %s's features are in host memory, and there is no disk tier whose staging could take the host tier's rows (give --host-memory below their size, or drop --stage-host-rows)", ds.Name)
}

// HostMemoryError says that --host-memory does not hold a disk tier's
// staging and tables (every disk tier's, for a typed dataset) even with
// no row in the host tiers.
type HostMemoryError struct {
	Asked int64             // --host-memory, in bytes
	Need  featstore.HostUse // the disk tiers with empty host tiers
}

func (e *HostMemoryError) Error() string {
	return fmt.Sprintf("host-memory: %s asked, but the disk tier's staging for the rows of a step needs %s and its tables %s: give at least %s (more for a host tier)",
		mib(e.Asked), mib(e.Need.Staging), mib(e.Need.Tables), mib(e.Need.Total()))
}

// hostRowsWithin is the most rows d's host tier may take beside cached
// rows in the cache so that its host memory (host tier, staging and
// tables: featstore.Disk.PlanHost) stays within hostMemory bytes (0:
// every row).
func hostRowsWithin(d *featstore.Disk, hostMemory int64, cached int) (int64, error) {
	if hostMemory <= 0 {
		return d.Rows(), nil
	}
	h, ok := d.FitHost(hostMemory, cached)
	if !ok {
		return 0, &HostMemoryError{Asked: hostMemory, Need: d.PlanHost(cached, 0)}
	}
	return h, nil
}

// checkHostUse refuses a disk tier whose host memory, as filled (use),
// exceeds hostMemory (0: no cap): PlanHost and Fill disagree.
func checkHostUse(use featstore.HostUse, hostMemory int64) error {
	if hostMemory > 0 && use.Total() > hostMemory {
		return fmt.Errorf("hybrid: the disk tiers hold %s of host memory, over --host-memory %s", mib(use.Total()), mib(hostMemory))
	}
	return nil
}

// diskDType is how a disk store holds f's rows in its cache and host
// tier: opt.FeatureDType where it says F32 or BF16, else as f holds them.
func diskDType(f *dataset.FeatureFile, opt Options) backend.DType {
	if dt := opt.FeatureDType; dt == backend.F32 || dt == backend.BF16 {
		return dt
	}
	return f.DType
}

// newDisk makes a featstore.Disk over f, ranked by order, whose host tier
// takes at most hostRows rows, the first inPlace of them read in place
// with opt.StageHost.
func newDisk(be backend.Backend, f *dataset.FeatureFile, order []int32, hostRows, inPlace int64, opt Options) (*featstore.Disk, error) {
	cfg := featstore.DiskConfig{File: f, FileType: f.DType, HostRows: hostRows, Readers: opt.DiskReaders,
		Direct: !opt.DiskBuffered, StageHost: opt.StageHost, InPlaceRows: inPlace, Log: opt.Log, Progress: progress(opt.Log, f.Path)}
	s, err := featstore.NewDisk(be, cfg, f.Rows, f.Dim, order, diskDType(f, opt))
	if err != nil {
		return nil, fmt.Errorf("hybrid: %s: %w", f.Path, err)
	}
	return s, nil
}

// progress says on log, every few seconds and at the end, how many of the
// rows the tiers take were read from file; nil without a log.
func progress(log io.Writer, file string) func(done, total int64) {
	if log == nil {
		return nil
	}
	start, last := time.Now(), time.Time{}
	return func(done, total int64) {
		if now := time.Now(); done == total || now.Sub(last) >= 5*time.Second {
			last = now
			fmt.Fprintf(log, "  reading the cache's and host tier's rows from %s: %d of %d (%.0f%%) in %s\n",
				file, done, total, percent(done, total), now.Sub(start).Round(time.Second))
		}
	}
}

// diskTiers reads a disk store's counters as rows and bytes per tier.
func diskTiers(s *featstore.Disk) (DiskTiers, error) {
	c, h, k, err := s.TierStats()
	rb := int64(s.Dim()) * int64(s.DType().Size())
	t := s.HostTime()
	return DiskTiers{CacheRows: c, HostRows: h, DiskRows: k, CacheBytes: c * rb, HostBytes: h * rb, DiskBytes: k * rb,
		Gathers: t.Gathers, HostNanos: int64(t.Total), PlaceNanos: int64(t.Placing)}, err
}

// sumTiers reads the counters of several disk stores (a typed run's, one
// per type with features), summed.
func sumTiers(stores []*featstore.Disk) (DiskTiers, error) {
	var sum DiskTiers
	for _, s := range stores {
		t, err := diskTiers(s)
		if err != nil {
			return sum, err
		}
		sum = sum.add(t)
	}
	return sum, nil
}

// HostFunction is a gather's host work's mean wall time and, of it,
// the placing of its ids, in microseconds.
func (d DiskTiers) HostFunction() (total, placing float64) {
	n := float64(max(d.Gathers, 1))
	return float64(d.HostNanos) / n / 1e3, float64(d.PlaceNanos) / n / 1e3
}

// add is d plus e.
func (d DiskTiers) add(e DiskTiers) DiskTiers {
	return DiskTiers{d.CacheRows + e.CacheRows, d.HostRows + e.HostRows, d.DiskRows + e.DiskRows,
		d.CacheBytes + e.CacheBytes, d.HostBytes + e.HostBytes, d.DiskBytes + e.DiskBytes,
		d.Gathers + e.Gathers, d.HostNanos + e.HostNanos, d.PlaceNanos + e.PlaceNanos}
}

// sub is d less an earlier reading e.
func (d DiskTiers) sub(e DiskTiers) DiskTiers {
	return DiskTiers{d.CacheRows - e.CacheRows, d.HostRows - e.HostRows, d.DiskRows - e.DiskRows,
		d.CacheBytes - e.CacheBytes, d.HostBytes - e.HostBytes, d.DiskBytes - e.DiskBytes,
		d.Gathers - e.Gathers, d.HostNanos - e.HostNanos, d.PlaceNanos - e.PlaceNanos}
}

// epochs records disk stores' tiers per epoch: BeforeRun reads the
// counters (read: of every store, summed) when a run starts a new epoch
// (once the device has finished the steps before), and finish at the end.
type epochs struct {
	read  func() (DiskTiers, error)
	epoch int
	last  DiskTiers
	out   []EpochTiers
}

// mark closes the epochs before epoch.
func (e *epochs) mark(epoch int) error {
	if epoch == e.epoch {
		return nil
	}
	now, err := e.read()
	if err != nil {
		return err
	}
	e.out = append(e.out, EpochTiers{Epoch: e.epoch + 1, DiskTiers: now.sub(e.last)})
	e.epoch, e.last = epoch, now
	return nil
}

// chain puts the epochs' mark before a replay's BeforeRun.
func (e *epochs) chain(ropt *train.ReplayOptions) {
	inner := ropt.BeforeRun
	ropt.BeforeRun = func(epoch, step int) error {
		if err := e.mark(epoch); err != nil || inner == nil {
			return err
		}
		return inner(epoch, step)
	}
}

// gatherRows is the most rows a step of seeds seeds gathers: its bottom
// layer's sources at the conservative envelope (sample.Envelope), which
// the replay driver's envelope never exceeds.
func gatherRows(ds *dataset.Dataset, seeds int, fanouts []int) int {
	caps := sample.Envelope(ds.Graph, seeds, fanouts)
	if len(caps) == 0 {
		return seeds
	}
	return caps[0].Src
}

package hybrid

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// onDisk writes ds into a directory and opens it with its features left
// in feat.npy.
func onDisk(t *testing.T, ds *dataset.Dataset) *dataset.Dataset {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if err := dataset.Write(dir, ds); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.OpenWith(dir, dataset.OpenOptions{FeaturesOnDisk: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// diskCase is a GPU cache, and a host memory budget: 0 (every row), or
// the bytes the disk tier needs with no host tier row (need, read from
// the error of a budget too small) plus host rows' bytes, minus under
// bytes; and what the tiers must give: rows from the host tier and from
// disk, or not.
type diskCase struct {
	cacheRows, hostRows, under int64
	host, disk                 bool
}

// smallStep is cfg with a step whose conservative envelope (the disk
// tier's staging) is a share of tiny's rows, so that a host memory budget
// can hold the staging and part of the rows, or none.
func smallStep(cfg train.Config) train.Config {
	cfg.Batch, cfg.Fanouts = 64, []int{5, 5}
	return cfg
}

// TestDiskMatchesReplay: with the features left on disk, the hybrid run
// gives plain replay's losses bit for bit (and so the hybrid run over the
// table in memory, which TestHybridMatchesReplay holds to the same),
// whether --host-memory holds every row, part of them or none beside the
// staging and tables, with and without a GPU cache, in bfloat16 tiers,
// and with the rows read through the page cache instead of O_DIRECT;
// the host memory the disk tier holds (host tier, staging and tables,
// measured) stays within the budget, its host tier takes exactly the rows
// the budget leaves, a budget a byte short of the staging and tables is
// refused naming --host-memory and the bytes; the rows from the cache,
// the host tier and the file add up to the rows gathered, in all and per
// epoch, and the plan names all three tiers.
func TestDiskMatchesReplay(t *testing.T) {
	mem, ds, cfg, want := diskSetup(t)
	runDiskCases(t, ds, cfg, want, Options{}, []diskCase{
		{2000, -1, 0, true, false}, {2000, ds.FeatureFile.Rows, 0, true, false}, {2000, 3000, 0, true, true},
		{2000, 0, 0, false, true}, {2000, 0, 1, false, false},
		{0, 3000, 0, true, true}, {0, 0, 0, false, true},
	})
	t.Run("buffered", func(t *testing.T) {
		checkDiskBudget(t, ds, cfg, Options{CacheRows: 2000, DiskBuffered: true}, want, diskCase{2000, 3000, 0, true, true})
	})
	t.Run("bfloat16", func(t *testing.T) {
		bf := *mem
		bf.RoundFeatures()
		checkDiskBudget(t, onDisk(t, &bf), cfg, Options{CacheRows: 1000}, replayLosses(t, &bf, cfg), diskCase{1000, 3000, 0, true, true})
	})
}

// TestDiskFetchAheadMatchesReplay: with the disk tier's gathers fetched
// a step ahead (Options.FetchAhead: the ids' copy, the host function and
// the row copies of step k+1 issued beside step k, into the next plan's
// own rows), the run still gives replay's losses bit for bit whether
// --host-memory holds every row, part of them or none beside the staging
// and tables, with and without a GPU cache; the rows by tier add up as
// in TestDiskMatchesReplay; and the gathers did go beside the step: the
// next plan has rows of its own, so the peak is higher than the same run's
// without fetching ahead.
func TestDiskFetchAheadMatchesReplay(t *testing.T) {
	_, ds, cfg, want := diskSetup(t)
	runDiskCases(t, ds, cfg, want, Options{FetchAhead: true}, []diskCase{
		{2000, -1, 0, true, false}, {2000, 3000, 0, true, true}, {2000, 0, 0, false, true}, {0, 3000, 0, true, true},
	})
	c := diskCase{2000, 3000, 0, true, true}
	in := checkDiskBudget(t, ds, cfg, Options{CacheRows: 2000}, want, c)
	ahead := checkDiskBudget(t, ds, cfg, Options{CacheRows: 2000, FetchAhead: true}, want, c)
	if ahead.PeakBytes <= in.PeakBytes {
		t.Errorf("peak %d bytes fetching ahead, %d not: the next plan has no rows of its own", ahead.PeakBytes, in.PeakBytes)
	}
}

// TestDiskStageHostMatchesReplay: with the host tier's rows staged by the
// host function (Options.StageHost), the run gives replay's losses bit
// for bit, with the rows fetched ahead and not, whether --host-memory
// holds every row, part of them or none beside the staging and tables
// (the staging now holds a gather's rows outside the cache: the host tier
// takes exactly the rows the budget leaves, and a budget a byte short is
// refused, as in TestDiskMatchesReplay), with and without a GPU cache;
// and the rows by tier are counted as without it, the host tier's rows
// still the host tier's; so with the host tier's first 1000 rows read in
// place (Options.Band) and only the rest staged.
func TestDiskStageHostMatchesReplay(t *testing.T) {
	_, ds, cfg, want := diskSetup(t)
	for _, ahead := range []bool{false, true} {
		for _, c := range []diskCase{
			{2000, -1, 0, true, false}, {2000, 3000, 0, true, true}, {2000, 0, 0, false, true}, {2000, 0, 1, false, false},
			{0, 3000, 0, true, true},
		} {
			t.Run(fmt.Sprint("ahead=", ahead, "/", c.cacheRows, "/", c.hostRows, "-", c.under), func(t *testing.T) {
				opt := Options{CacheRows: c.cacheRows, FetchAhead: ahead}
				staged := opt
				staged.StageHost, staged.Band = true, -1 // every host tier row staged
				st := checkDiskBudget(t, ds, cfg, staged, want, c)
				if st == nil || c.hostRows != 3000 {
					return
				}
				plain := checkDiskBudget(t, ds, cfg, opt, want, c)
				if tr := st.Tiers; tr.Gathers == 0 || tr.Gathers != plain.Tiers.Gathers || tr.PlaceNanos <= 0 || tr.HostNanos < tr.PlaceNanos {
					t.Errorf("host functions: %d gathers, %d ns, %d placing; %d gathers without staging", tr.Gathers, tr.HostNanos, tr.PlaceNanos, plain.Tiers.Gathers)
				}
				if counts(*st.Tiers) != counts(*plain.Tiers) || st.Placement.HostRows != plain.Placement.HostRows {
					t.Errorf("rows by tier %+v (host tier of %d rows) with the host rows staged, %+v (%d) without", *st.Tiers, st.Placement.HostRows, *plain.Tiers, plain.Placement.HostRows)
				}
			})
		}
	}
	rb := int64(ds.FeatDim) * int64(diskDType(ds.FeatureFile, Options{}).Size())
	c := diskCase{2000, 3000, 0, true, true}
	part := checkDiskBudget(t, ds, cfg, Options{CacheRows: 2000, StageHost: true, Band: 1000 * rb}, want, c)
	plain := checkDiskBudget(t, ds, cfg, Options{CacheRows: 2000}, want, c)
	if counts(*part.Tiers) != counts(*plain.Tiers) {
		t.Errorf("rows by tier %+v with the host tier's first 1000 rows in place and the rest staged, %+v without staging", *part.Tiers, *plain.Tiers)
	}
}

// TestDiskLookaheadMatchesReplay: with the disk tier's gathers started
// two or three steps ahead (Options.Lookahead: the split and the host's
// work of step k+L issued beside step k, landed beside step k+L-1, each
// into a site of its own), the run gives replay's losses bit for bit,
// with the host tier's rows staged and not, whether --host-memory holds
// every row, part of them or none beside the stagings and tables (a
// budget a byte short refused), with and without a GPU cache; and the
// ring's plans have rows of their own: the peak is above one step ahead's.
// (Three steps ahead only staged: without StageHost, each of the five
// stagings shrinks with each row the host tier takes once the rows left
// on disk are fewer than a gather's, so a budget for the host tier's 3000
// rows holds more.)
func TestDiskLookaheadMatchesReplay(t *testing.T) {
	_, ds, cfg, want := diskSetup(t)
	for _, la := range []int{2, 3} {
		for _, stage := range []bool{false, true} {
			if la == 3 && !stage {
				continue
			}
			t.Run(fmt.Sprint("lookahead=", la, "/stage=", stage), func(t *testing.T) {
				runDiskCases(t, ds, cfg, want, Options{Lookahead: la, StageHost: stage, Band: -1}, []diskCase{
					{2000, -1, 0, true, false}, {2000, 3000, 0, true, true}, {2000, 0, 0, false, true}, {0, 3000, 0, true, true},
				})
			})
		}
	}
	c := diskCase{2000, 3000, 0, true, true}
	one := checkDiskBudget(t, ds, cfg, Options{CacheRows: 2000, FetchAhead: true}, want, c)
	two := checkDiskBudget(t, ds, cfg, Options{CacheRows: 2000, Lookahead: 2}, want, c)
	if two.PeakBytes <= one.PeakBytes {
		t.Errorf("peak %d bytes two steps ahead, %d one: the ring's third plan has no rows of its own", two.PeakBytes, one.PeakBytes)
	}
}

// diskSetup is tiny (mem) with a step whose staging is a share of its
// rows (smallStep), its features left on disk (ds), and replay's losses.
func diskSetup(t *testing.T) (mem, ds *dataset.Dataset, cfg train.Config, want []float32) {
	mem, cfg = tiny(t)
	cfg = smallStep(cfg)
	return mem, onDisk(t, mem), cfg, replayLosses(t, mem, cfg)
}

// runDiskCases runs checkDiskBudget for each case, a subtest each, with
// the options base and the case's cache.
func runDiskCases(t *testing.T, ds *dataset.Dataset, cfg train.Config, want []float32, base Options, cases []diskCase) {
	for _, c := range cases {
		t.Run(fmt.Sprint(c.cacheRows, "/", c.hostRows, "-", c.under), func(t *testing.T) {
			opt := base
			opt.CacheRows = c.cacheRows
			checkDiskBudget(t, ds, cfg, opt, want, c)
		})
	}
}

// checkDiskBudget runs diskCase c: its budget from the disk tier's need,
// refused where it is short of it (nil Stats).
func checkDiskBudget(t *testing.T, ds *dataset.Dataset, cfg train.Config, opt Options, want []float32, c diskCase) *Stats {
	t.Helper()
	if c.hostRows >= 0 {
		need := diskNeed(t, ds, cfg, opt)
		rb := int64(ds.FeatDim) * int64(diskDType(ds.FeatureFile, opt).Size())
		opt.HostMemory = need + c.hostRows*rb - c.under
	}
	if c.under > 0 {
		_, _, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg, train.Options{}, opt)
		var short *HostMemoryError
		if !errors.As(err, &short) || short.Asked != opt.HostMemory || !strings.HasPrefix(err.Error(), "host-memory: ") ||
			!strings.Contains(err.Error(), fmt.Sprintf("(%d bytes)", short.Need.Staging)) {
			t.Fatalf("a budget %d bytes short: %v", c.under, err)
		}
		return nil
	}
	st := checkDiskRun(t, ds, cfg, opt, want, c)
	p := st.Placement
	if opt.HostMemory > 0 && p.Host.Total() > opt.HostMemory || p.Host.HostRows != p.HostRows || p.Host.StageRows == 0 && p.DiskRows > 0 {
		t.Errorf("the disk tier's host memory %+v (%d bytes) over --host-memory %d, or not the plan's %d host rows", p.Host, p.Host.Total(), opt.HostMemory, p.HostRows)
	}
	if c.hostRows >= 0 && p.HostRows != min(c.hostRows, p.Rows-p.CacheRows) {
		t.Errorf("host tier of %d rows, want %d", p.HostRows, c.hostRows)
	}
	return st
}

// diskNeed is the host memory the disk tier needs with no host tier row,
// as the error of a budget of one byte says it.
func diskNeed(t *testing.T, ds *dataset.Dataset, cfg train.Config, opt Options) int64 {
	t.Helper()
	opt.HostMemory = 1
	_, _, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg, train.Options{}, opt)
	var short *HostMemoryError
	if !errors.As(err, &short) || short.Need.Staging <= 0 || short.Need.Tables <= 0 || short.Need.HostRows != 0 {
		t.Fatalf("a budget of one byte: %v", err)
	}
	return short.Need.Total()
}

func checkDiskRun(t *testing.T, ds *dataset.Dataset, cfg train.Config, opt Options, want []float32, c diskCase) *Stats {
	t.Helper()
	var got []float32
	var log strings.Builder
	opt.Log = &log
	_, st, err := Run(context.Background(), record.New(cpu.New(2)), ds, cfg,
		train.Options{OnStep: func(_, _ int, l float32) { got = append(got, l) }}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("losses differ from replay's:\n%v\n%v", got, want)
	}
	tr := st.Tiers
	if tr == nil || tr.CacheRows+tr.HostRows+tr.DiskRows != st.Rows || st.HostRows != tr.HostRows+tr.DiskRows {
		t.Fatalf("tiers %+v do not add up to %d rows (%d outside the cache)", tr, st.Rows, st.HostRows)
	}
	if (tr.HostRows > 0) != c.host || (tr.DiskRows > 0) != c.disk || (tr.CacheRows > 0) != (opt.CacheRows != 0) {
		t.Errorf("rows by tier %+v, want host %t, disk %t", tr, c.host, c.disk)
	}
	var sum DiskTiers
	for i, e := range st.Epochs {
		if e.Epoch != i+1 {
			t.Errorf("epoch %d of the tiers' figures is numbered %d, want %d (1-based, as the run's epochs)", i, e.Epoch, i+1)
		}
		sum.CacheRows += e.CacheRows
		sum.HostRows += e.HostRows
		sum.DiskRows += e.DiskRows
		sum.DiskBytes += e.DiskBytes
	}
	if len(st.Epochs) != cfg.Epochs || sum.CacheRows != tr.CacheRows || sum.HostRows != tr.HostRows || sum.DiskRows != tr.DiskRows || sum.DiskBytes != tr.DiskBytes {
		t.Errorf("epochs %+v do not add up to %+v", st.Epochs, tr)
	}
	for _, line := range []string{"feature cache:", "host memory, read in place", "disk, read from " + ds.FeatureFile.Path} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("the plan has no %q:\n%s", line, log.String())
		}
	}
	t.Logf("%+v; plan:\n%s", *tr, log.String())
	return st
}

// TestDiskRefusals: features in memory larger than --host-memory, a disk
// tier with hot vertices or layer-wise evaluation, and host tier rows
// staged or gathers started steps ahead without a disk tier, are refused,
// naming the flag.
func TestDiskRefusals(t *testing.T) {
	mem, cfg := tiny(t)
	ds := onDisk(t, mem)
	full := cfg
	full.FullEval = true
	for _, c := range []struct {
		ds   *dataset.Dataset
		cfg  train.Config
		opt  Options
		want string
	}{
		{mem, cfg, Options{HostMemory: 1000}, "host-memory: "},
		{ds, cfg, Options{Hot: HotOptions{Ratio: 0.1}}, "hot-ratio: "},
		{mem, cfg, Options{StageHost: true}, "stage-host-rows: "},
		{mem, cfg, Options{Lookahead: 2}, "lookahead: "},
		{ds, full, Options{}, "full-eval: "},
	} {
		_, _, err := Run(context.Background(), record.New(cpu.New(1)), c.ds, c.cfg, train.Options{}, c.opt)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("want an error starting %q, got %v", c.want, err)
		}
	}
}

// counts is t's rows and bytes, without the host functions' times.
func counts(t DiskTiers) DiskTiers {
	t.Gathers, t.HostNanos, t.PlaceNanos = 0, 0, 0
	return t
}

package hybrid

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// typedOnDisk writes a typed ds into a directory and opens it with every
// type's features left in its feat.npy.
func typedOnDisk(t *testing.T, ds *dataset.Dataset) *dataset.Dataset {
	t.Helper()
	d := onDisk(t, ds)
	for _, vt := range d.Types {
		if (vt.FeatureFile == nil) != (vt.FeatDim == 0) {
			t.Fatalf("type %s of feat_dim %d: file %v", vt.Name, vt.FeatDim, vt.FeatureFile)
		}
	}
	return d
}

// threeFeatured is hetero-tiny with every featureless type but the last
// given features (allFeatures'): three types of several widths on disk,
// one of learned rows.
func threeFeatured(ds *dataset.Dataset) *dataset.Dataset {
	out := allFeatures(ds)
	for i := len(ds.Types) - 1; i >= 0; i-- {
		if ds.Types[i].FeatDim == 0 {
			out.Types[i] = ds.Types[i]
			break
		}
	}
	return out
}

// featuredBytes is the bytes of every typed feature row, as float32.
func featuredBytes(ds *dataset.Dataset) int64 {
	var b int64
	for _, vt := range ds.Types {
		b += vt.Count * int64(vt.FeatDim) * 4
	}
	return b
}

// TestTypedDiskMatchesReplay: with every type's features left on disk
// (hetero-tiny's two featured types, and three of several widths beside
// a featureless type's learned rows), the typed hybrid run trains bit for
// bit as typed replay with every table resident, whether the one
// --host-memory holds every row, the disk tiers' stagings and tables and
// a tenth of the rows' bytes, or those alone (the host tiers then only
// of the types whose staging would hold their rows anyway), with a
// quarter of the rows cached or none (a step whose conservative envelope
// is a share of the rows, so that the stagings hold some of them); a budget a byte short of
// the stagings and tables is refused naming --host-memory; each type's
// cache, host and disk rows add up to its rows, the disk tiers' host
// memory (host tiers, stagings and tables, measured) fits the budget, the
// counters by tier add up to the rows gathered, in all and per epoch, and
// the plan names every featured type's file.
func TestTypedDiskMatchesReplay(t *testing.T) {
	hetero, cfg := heteroTiny(t)
	cfg.Batch, cfg.Fanouts = 32, []int{4, 3}
	for _, mem := range []*dataset.Dataset{hetero, threeFeatured(hetero)} {
		ds := typedOnDisk(t, mem)
		want := replayLosses(t, mem, cfg)
		var rows int64
		for _, vt := range ds.Types {
			if vt.FeatDim > 0 {
				rows += vt.Count
			}
		}
		tenth := featuredBytes(ds) / 10
		for _, c := range []struct {
			cacheRows, hostMemory int64
			host, disk            bool
		}{
			{rows / 4, -1, true, false}, {rows / 4, tenth, true, true}, {rows / 4, 0, false, true},
			{0, tenth, true, true}, {0, 0, false, true}, {0, -2, false, false},
		} {
			t.Run(fmt.Sprint(mem.Name, "/", c.cacheRows, "/", c.hostMemory), func(t *testing.T) {
				opt := Options{CacheRows: c.cacheRows}
				if c.hostMemory >= 0 || c.hostMemory == -2 {
					opt.HostMemory = diskNeed(t, ds, cfg, opt) + max(c.hostMemory, -1)
				}
				if c.hostMemory == -2 {
					_, _, err := Run(context.Background(), record.New(cpu.New(1)), ds, cfg, train.Options{}, opt)
					if err == nil || !strings.HasPrefix(err.Error(), "host-memory: ") || strings.Contains(err.Error(), "\n") {
						t.Fatalf("a budget a byte short: %v", err)
					}
					return
				}
				got, st, plan := typedHybrid(t, ds, cfg, opt)
				if !slices.Equal(got, want) {
					t.Fatalf("typed disk tier:\n%v\ntyped replay:\n%v", got, want)
				}
				checkTypedTiers(t, ds, cfg, st, plan, opt.HostMemory)
				tr := st.Tiers
				if c.hostMemory == 0 {
					tr = noHostTier(t, st, tr)
				}
				if (tr.HostRows > 0) != c.host || (tr.DiskRows > 0) != c.disk || (tr.CacheRows > 0) != (c.cacheRows > 0) {
					t.Errorf("rows by tier %+v, want host %t, disk %t", *tr, c.host, c.disk)
				}
			})
		}
	}
}

// TestTypedDiskStageHost: a typed run whose disk tiers stage their host
// tiers' rows (Options.StageHost) trains as typed replay bit for bit, a
// quarter of the rows cached and the budget holding the stagings and
// tables and a tenth of the rows' bytes, within it, with rows from every
// tier that add up (checkTypedTiers).
func TestTypedDiskStageHost(t *testing.T) {
	mem, cfg := heteroTiny(t)
	cfg.Batch, cfg.Fanouts = 32, []int{4, 3}
	ds := typedOnDisk(t, mem)
	var rows int64
	for _, vt := range ds.Types {
		if vt.FeatDim > 0 {
			rows += vt.Count
		}
	}
	opt := Options{CacheRows: rows / 4, StageHost: true}
	opt.HostMemory = diskNeed(t, ds, cfg, opt) + featuredBytes(ds)/10
	got, st, plan := typedHybrid(t, ds, cfg, opt)
	if want := replayLosses(t, mem, cfg); !slices.Equal(got, want) {
		t.Fatalf("typed disk tier, host rows staged:\n%v\ntyped replay:\n%v", got, want)
	}
	checkTypedTiers(t, ds, cfg, st, plan, opt.HostMemory)
	if tr := st.Tiers; tr.HostRows == 0 || tr.DiskRows == 0 || tr.CacheRows == 0 {
		t.Errorf("rows by tier %+v, want rows from each", *tr)
	}
}

// noHostTier checks that a run whose budget holds the stagings and tables
// alone gave host tiers only to types whose every row outside the cache
// is in it (their staging would have held them), and is the tiers' rows
// with the host rows counted as none where so.
func noHostTier(t *testing.T, st *Stats, tr *DiskTiers) *DiskTiers {
	t.Helper()
	for _, tp := range st.Placement.Types {
		if tp.HostRows > 0 && tp.DiskRows > 0 {
			t.Errorf("%s: a host tier of %d rows beside %d on disk, from a budget of no host rows", tp.Name, tp.HostRows, tp.DiskRows)
		}
	}
	if st.Placement.DiskRows == 0 {
		return tr
	}
	out := *tr
	out.HostRows = 0
	return &out
}

// checkTypedTiers checks a typed disk run's placement, counters and plan.
func checkTypedTiers(t *testing.T, ds *dataset.Dataset, cfg train.Config, st *Stats, plan string, hostMemory int64) {
	t.Helper()
	var hostBytes int64
	for i, tp := range st.Placement.Types {
		vt := ds.Types[i]
		if vt.FeatDim == 0 {
			continue
		}
		if tp.CacheRows+tp.HostRows+tp.DiskRows != vt.Count || tp.DiskFile != vt.FeatureFile.Path {
			t.Errorf("%s: %d cached, %d host and %d disk rows of %d, file %q", tp.Name, tp.CacheRows, tp.HostRows, tp.DiskRows, vt.Count, tp.DiskFile)
		}
		hostBytes += tp.HostRows * tp.RowBytes
		if !strings.Contains(plan, "disk, read from "+vt.FeatureFile.Path) {
			t.Errorf("the plan does not name %s's file:\n%s", vt.Name, plan)
		}
	}
	use := st.Placement.Host
	if hostMemory > 0 && use.Total() > hostMemory || use.HostTier < hostBytes || use.HostRows != st.Placement.HostRows {
		t.Errorf("host tiers of %d bytes (%d rows), disk tiers' host memory %+v (%d bytes), over --host-memory %d", hostBytes, st.Placement.HostRows, use, use.Total(), hostMemory)
	}
	tr := st.Tiers
	if tr == nil || tr.CacheRows+tr.HostRows+tr.DiskRows != st.Rows || st.HostRows != tr.HostRows+tr.DiskRows || st.Rows == 0 {
		t.Fatalf("tiers %+v do not add up to %d rows (%d outside the caches)", tr, st.Rows, st.HostRows)
	}
	var sum DiskTiers
	for _, e := range st.Epochs {
		sum = sum.add(e.DiskTiers)
	}
	if len(st.Epochs) != cfg.Epochs || sum != *tr {
		t.Errorf("epochs %+v do not add up to %+v", st.Epochs, *tr)
	}
	t.Logf("%+v; plan:\n%s", *tr, plan)
}

// TestTypedDiskRefusals: a typed dataset whose features are in memory and
// larger than --host-memory is refused in one line naming the flag, and
// so are disk tiers of a typed dataset fetched a step ahead (the typed
// step gathers each type's rows in the step: the replay driver fetches a
// one-type store's rows only), and host tier rows staged without a disk
// tier.
func TestTypedDiskRefusals(t *testing.T) {
	ds, cfg := heteroTiny(t)
	for _, c := range []struct {
		ds   *dataset.Dataset
		opt  Options
		want string
	}{
		{ds, Options{HostMemory: 1000}, "host-memory: "},
		{typedOnDisk(t, ds), Options{FetchAhead: true}, "fetch-ahead: "},
		{typedOnDisk(t, ds), Options{Lookahead: 2}, "lookahead: "},
		{ds, Options{StageHost: true}, "stage-host-rows: "},
	} {
		_, _, err := Run(context.Background(), record.New(cpu.New(1)), c.ds, cfg, train.Options{}, c.opt)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("want one line starting %q, got %v", c.want, err)
		}
	}
}

// TestSplitHost: the host tiers continue the global ranking after each
// type's cache (ties to the lower type, rows that no longer fit skipped
// for smaller ones ranked lower, a featureless type given none), and,
// with rows of one width, a cache then a host tier take what one cache of
// both rooms would.
func TestSplitHost(t *testing.T) {
	rb := []int64{4, 0, 8}
	scores := [][]int64{{10, 6, 2}, nil, {30, 12, 1}} // per byte: 2.5 1.5 0.5 and 3.75 1.5 0.125
	for _, c := range []struct {
		room         int64
		cached, host []int64
	}{
		{12, []int64{1, 0, 1}, []int64{1, 0, 1}}, // 1.5 of type 0, then type 2's 1.5
		{8, []int64{1, 0, 1}, []int64{2, 0, 0}},  // type 2's 1.5 no longer fits; type 0's 0.5 does
		{1 << 20, []int64{0, 0, 3}, []int64{3, 0, 0}},
		{1 << 20, []int64{3, 0, 3}, []int64{0, 0, 0}},
		{3, []int64{0, 0, 0}, []int64{0, 0, 0}},
	} {
		if got := SplitHost(c.room, rb, scores, c.cached); !slices.Equal(got, c.host) {
			t.Errorf("room %d after %v: %v, want %v", c.room, c.cached, got, c.host)
		}
	}
	same := []int64{12, 12, 12}
	rand := [][]int64{{90, 50, 40, 7, 3}, {80, 60, 20, 10}, {70, 65, 30, 2, 1, 0}}
	for cache := int64(0); cache <= 15; cache += 3 {
		for host := int64(0); host <= 15; host += 2 {
			c := SplitCache(cache*12, -1, same, rand)
			h := SplitHost(host*12, same, rand, c)
			both := SplitCache((cache+host)*12, -1, same, rand)
			for ty := range both {
				if c[ty]+h[ty] != both[ty] {
					t.Fatalf("cache %d rows %v then host %d rows %v, one split of both %v", cache, c, host, h, both)
				}
			}
		}
	}
}

package hybrid

import (
	"context"
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

// diskCase is a GPU cache and a host tier (bytes; 0: every row), and what
// the tiers must give: rows from the host tier and from disk, or not.
type diskCase struct {
	cacheRows, hostMemory int64
	host, disk            bool
}

// TestDiskMatchesReplay: with the features left on disk, the hybrid run
// gives plain replay's losses bit for bit (and so the hybrid run over the
// table in memory, which TestHybridMatchesReplay holds to the same),
// whether the host tier holds every row, part of them or none, with and
// without a GPU cache and in bfloat16 tiers; the rows from the cache, the
// host tier and the file add up to the rows gathered, in all and per
// epoch, and the plan names all three tiers.
func TestDiskMatchesReplay(t *testing.T) {
	mem, cfg := tiny(t)
	ds := onDisk(t, mem)
	rowBytes := int64(ds.FeatDim) * 4
	want := replayLosses(t, mem, cfg)
	for _, c := range []diskCase{
		{2000, 0, true, false}, {2000, 3000 * rowBytes, true, true}, {2000, 1, false, true},
		{0, 3000 * rowBytes, true, true}, {0, 1, false, true},
	} {
		t.Run(fmt.Sprint(c.cacheRows, "/", c.hostMemory), func(t *testing.T) {
			checkDiskRun(t, ds, cfg, Options{CacheRows: c.cacheRows, HostMemory: c.hostMemory}, want, c)
		})
	}
	t.Run("bfloat16", func(t *testing.T) {
		bf := *mem
		bf.RoundFeatures()
		checkDiskRun(t, onDisk(t, &bf), cfg, Options{CacheRows: 1000, HostMemory: 3000 * rowBytes / 2}, replayLosses(t, &bf, cfg), diskCase{host: true, disk: true})
	})
}

func checkDiskRun(t *testing.T, ds *dataset.Dataset, cfg train.Config, opt Options, want []float32, c diskCase) {
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
	for _, e := range st.Epochs {
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
}

// TestDiskRefusals: features in memory larger than --host-memory, and a
// disk tier with hot vertices, rows fetched ahead or layer-wise
// evaluation, are refused, naming the flag.
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
		{ds, cfg, Options{FetchAhead: true}, "fetch-ahead: "},
		{ds, cfg, Options{Hot: HotOptions{Ratio: 0.1}}, "hot-ratio: "},
		{ds, full, Options{}, "full-eval: "},
	} {
		_, _, err := Run(context.Background(), record.New(cpu.New(1)), c.ds, c.cfg, train.Options{}, c.opt)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("want an error starting %q, got %v", c.want, err)
		}
	}
}

package hybrid

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// heteroTiny is the hetero-tiny preset (papers and fields of study with
// features; authors and institutions without: learned rows) and its
// settings for two epochs.
func heteroTiny(t *testing.T) (*dataset.Dataset, train.Config) {
	return traintest.Preset(t, "hetero-tiny")
}

// allFeatures is ds with every featureless type given a table of its
// own, 8 + 4·t wide (the types' rows of several widths), deterministic.
func allFeatures(ds *dataset.Dataset) *dataset.Dataset {
	out := *ds
	out.Name = ds.Name + "-featured"
	out.Types = slices.Clone(ds.Types)
	for i := range out.Types {
		vt := &out.Types[i]
		if vt.FeatDim > 0 {
			continue
		}
		vt.FeatDim = 8 + 4*i
		vt.Features = make([]float32, int(vt.Count)*vt.FeatDim)
		for j := range vt.Features {
			vt.Features[j] = float32(math.Sin(float64(j*7+i))) / 2
		}
	}
	return &out
}

// typedHybrid trains cfg on ds with the hybrid driver on the CPU (the
// record backend standing for a GPU) under opt, and returns every step's
// loss, the figures and the printed plan.
func typedHybrid(t *testing.T, ds *dataset.Dataset, cfg train.Config, opt Options) ([]float32, *Stats, string) {
	t.Helper()
	return hybridOn(t, record.New(cpu.New(2)), ds, cfg, opt)
}

// hybridOn is typedHybrid on be.
func hybridOn(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg train.Config, opt Options) ([]float32, *Stats, string) {
	t.Helper()
	var losses []float32
	var log strings.Builder
	opt.Log = &log
	topt := train.Options{OnStep: func(_, _ int, l float32) { losses = append(losses, l) }}
	_, st, err := Run(context.Background(), be, ds, cfg, topt, opt)
	if err != nil {
		t.Fatal(err)
	}
	return losses, st, log.String()
}

// TestTypedHybridMatchesReplay: on hetero-tiny (a featureless type's
// learned rows resident beside the papers' tiers) and on a dataset whose
// every type has features, of several widths, the hybrid run with the
// caches holding every row, a share of them (by a row count, and by a
// budget) and none trains bit for bit as the typed replay run with every
// table resident; the counters see the tiers (hit rate 1, in between, 0),
// a budget's caches fit it, and the plan names every type's tiers.
func TestTypedHybridMatchesReplay(t *testing.T) {
	hetero, cfg := heteroTiny(t)
	for _, ds := range []*dataset.Dataset{hetero, allFeatures(hetero)} {
		want := replayLosses(t, ds, cfg)
		_, all, _ := typedHybrid(t, ds, cfg, Options{CacheRows: -1})
		p := all.Placement
		// room for a third of the rows' bytes past the envelope's growth room
		budget := p.Resident + 1 + growthRoom(p.Envelope, train.ReplayOptions{}) + p.CacheBytes()/3
		for _, c := range []struct {
			name     string
			opt      Options
			min, max float64
		}{
			{"all", Options{CacheRows: -1}, 1, 1},
			{"rows", Options{CacheRows: p.Rows / 4}, 0.05, 0.99},
			{"budget", Options{CacheRows: -1, Budget: budget, Margin: 1}, 0.05, 0.99},
			{"none", Options{CacheRows: 0}, 0, 0},
		} {
			t.Run(fmt.Sprint(ds.Name, "/", c.name), func(t *testing.T) {
				got, st, plan := typedHybrid(t, ds, cfg, c.opt)
				if !slices.Equal(got, want) {
					t.Fatalf("hybrid:\n%v\nreplay:\n%v", got, want)
				}
				if st.Rows == 0 || st.HitRate < c.min || st.HitRate > c.max {
					t.Errorf("hit rate %.3f over %d rows, want in [%g, %g]", st.HitRate, st.Rows, c.min, c.max)
				}
				q := st.Placement
				if c.opt.Budget > 0 && q.Peak() > c.opt.Budget {
					t.Errorf("planned peak %d over the budget %d", q.Peak(), c.opt.Budget)
				}
				// The step the replay driver provisioned, and under a budget a
				// tenth of it kept for its growths (twice the margin's 5%).
				if q.Envelope <= 0 || q.Envelope >= q.Resident {
					t.Errorf("step envelope %d bytes of %d resident", q.Envelope, q.Resident)
				}
				if want := int64(1) + q.Envelope/10; c.opt.Budget > 0 && (q.Margin < want-1 || q.Margin > want+1) {
					t.Errorf("margin %d bytes under a budget, want 1 + a tenth of the %d byte step, %d", q.Margin, q.Envelope, want)
				}
				for _, tp := range q.Types {
					if tp.RowBytes > 0 && tp.CacheRows+tp.HostRows != tp.Rows {
						t.Errorf("%s: %d cached and %d host rows of %d", tp.Name, tp.CacheRows, tp.HostRows, tp.Rows)
					}
					if !strings.Contains(plan, "  "+tp.Name+": ") {
						t.Errorf("the plan does not name type %s:\n%s", tp.Name, plan)
					}
				}
				t.Logf("cache %d of %d rows: hit rate %.3f; %+v", q.CacheRows, q.Rows, st.HitRate, q.Types)
			})
		}
	}
}

// TestTypedHybridRefusals: a typed run with hot vertices is refused in one
// line naming --hot-ratio, as are host topology and rows fetched ahead,
// each naming its setting, before anything is trained.
func TestTypedHybridRefusals(t *testing.T) {
	ds, cfg := heteroTiny(t)
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Hot: HotOptions{Ratio: 0.1, Staleness: 1, SuperBatch: 4}}, "--hot-ratio"},
		{Options{Topology: TopologyHost}, "host topology"},
		{Options{FetchAhead: true}, "fetch-ahead"},
	} {
		_, _, err := Run(context.Background(), record.New(cpu.New(1)), ds, cfg, train.Options{}, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line naming %s", c.opt, err, c.want)
		}
	}
	if _, err := NewTier(cpu.New(1), ds, cfg, Options{}); err == nil || !strings.Contains(err.Error(), "typed") {
		t.Errorf("a group's tier of a typed dataset: %v", err)
	}
}

// TestSplitCache: one cache shared by rows of several widths follows the
// global ranking by score per byte (ties to the lower type), skips what
// no longer fits for smaller rows ranked lower, stops at a row count, and
// gives a featureless type nothing; with rows of one width, every cached
// row of a random ranking scores at least as much as every row left out,
// and the caches fit the room.
func TestSplitCache(t *testing.T) {
	rb := []int64{4, 0, 8}
	scores := [][]int64{{10, 6, 2}, nil, {30, 12, 1}} // per byte: 2.5 1.5 0.5 and 3.75 1.5 0.125
	for _, c := range []struct {
		room, want int64
		take       []int64
	}{
		{1 << 20, -1, []int64{3, 0, 3}},
		{24, -1, []int64{2, 0, 2}}, // 3.75, 2.5, then 1.5 of type 0 before type 2's
		{20, -1, []int64{3, 0, 1}}, // type 2's second row no longer fits, type 0's third does
		{15, -1, []int64{1, 0, 1}},
		{1 << 20, 3, []int64{2, 0, 1}},
		{7, -1, []int64{1, 0, 0}},
		{3, -1, []int64{0, 0, 0}},
	} {
		if got := SplitCache(c.room, c.want, rb, scores); !slices.Equal(got, c.take) {
			t.Errorf("room %d, want %d rows: %v, want %v", c.room, c.want, got, c.take)
		}
	}
	r := uint64(7)
	next := func() int64 { r = r*6364136223846793005 + 1442695040888963407; return int64(r >> 44) }
	rand := make([][]int64, 3)
	for ty := range rand {
		for range 50 + ty*20 {
			rand[ty] = append(rand[ty], next()%1000)
		}
		slices.SortFunc(rand[ty], func(a, b int64) int { return int(b - a) })
	}
	const row, room = 12, 12 * 61
	take := SplitCache(room, -1, []int64{row, row, row}, rand)
	var total, low, high int64 = 0, math.MaxInt64, -1
	for ty, n := range take {
		total += n
		if n > 0 {
			low = min(low, rand[ty][n-1])
		}
		if n < int64(len(rand[ty])) {
			high = max(high, rand[ty][n])
		}
	}
	if total != 61 || low < high {
		t.Errorf("%v: %d rows cached (room for 61), the lowest cached score %d below the highest left out %d", take, total, low, high)
	}
}

// TestDegreeRanking: a type's rows rank by their degree summed over the
// relations where the type is the source (every edge counted once, so the
// degrees sum to those relations' edges), highest first, ties by id; a
// type no relation has as source ranks by id.
func TestDegreeRanking(t *testing.T) {
	ds, _ := heteroTiny(t)
	for ty, vt := range ds.Types {
		order, scores, err := DegreeRanking(ds, ty)
		if err != nil {
			t.Fatal(err)
		}
		var edges, sum int64
		for _, r := range ds.Relations {
			if r.Src == ty {
				edges += r.Graph.NumEdges()
			}
		}
		for i, s := range scores {
			sum += s
			if i > 0 && (s > scores[i-1] || s == scores[i-1] && order[i] < order[i-1]) {
				t.Fatalf("%s: rank %d (vertex %d, degree %d) after vertex %d of degree %d", vt.Name, i, order[i], s, order[i-1], scores[i-1])
			}
		}
		if int64(len(order)) != vt.Count || sum != edges {
			t.Errorf("%s: %d ranked of %d, degrees sum to %d, its relations have %d edges", vt.Name, len(order), vt.Count, sum, edges)
		}
	}
}

package featstore

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestTieredNeedsTieredGather: a tiered store on a backend without the
// two-tier gather fails when it is built, naming the backend and the
// capability; a direct store works on it.
func TestTieredNeedsTieredGather(t *testing.T) {
	const rows, dim = 10, 4
	f32, _, _, ids := tables(rows, dim)
	be := struct{ backend.Backend }{cpu.New(1)} // the required core only
	_, err := NewTiered(be, f32, dim, nil, 0)
	if err == nil {
		t.Fatal("a tiered store was built on a backend without the two-tier gather")
	}
	for _, want := range []string{be.Name(), "backend.TieredGather"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	s, err := UploadAs(be, f32, dim, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	if got, want := gatherAll(t, be, s, ids), rowsOf(f32, dim, ids); !slices.Equal(got, want) {
		t.Error("the direct store's rows differ from the table's")
	}
}

// TestTieredInPlace: the tiered store is InPlace: before Fill every slot is
// -1 and there is no cache; after it, the cache row of each cached vertex
// is its table row (float32 and bfloat16 tiers), GatherMisses writes the
// rows of the others exactly as Gather does and no cached vertex's row,
// and both count host rows and all rows alike.
func TestTieredInPlace(t *testing.T) {
	const rows, dim, cached = 40, 3, 15
	f32, bits, widened, ids := tables(rows, dim)
	order := strided(rows, 7)
	for _, c := range []struct {
		feat  any
		dt    backend.DType
		table []float32
	}{{f32, backend.F32, f32}, {bits, backend.BF16, widened}} {
		be := cpu.New(1)
		s, err := NewTiered(be, c.feat, dim, order, c.dt)
		if err != nil {
			t.Fatal(err)
		}
		var in InPlace = s
		if cache, slot := in.Tiers(); cache != nil || slices.ContainsFunc(readI32(t, be, slot, rows), func(v int32) bool { return v != -1 }) {
			t.Fatalf("%s: before Fill: a cache or a slot", c.dt)
		}
		if err := s.Fill(cached); err != nil {
			t.Fatal(err)
		}
		cache, sb := in.Tiers()
		slot := readI32(t, be, sb, rows)
		cacheRows := make([]float32, cached*dim)
		if c.dt == backend.BF16 {
			h := make([]uint16, cached*dim)
			be.Read(h, cache, 0)
			for i, b := range h {
				cacheRows[i] = backend.BF16Float(b)
			}
		} else {
			be.Read(cacheRows, cache, 0)
		}
		for v, sl := range slot {
			if got := sl >= 0; got != slices.Contains(order[:cached], int32(v)) {
				t.Fatalf("%s: vertex %d has slot %d", c.dt, v, sl)
			}
			if sl >= 0 && !slices.Equal(cacheRows[int(sl)*dim:int(sl+1)*dim], c.table[v*dim:(v+1)*dim]) {
				t.Errorf("%s: vertex %d's cache row differs from its table row", c.dt, v)
			}
		}
		want := gatherAll(t, be, s, ids)
		hostRows, all, _ := s.Stats()
		s.ResetStats()
		got := gatherWith(t, be, dim, ids, s.GatherMisses)
		missRows, missAll, _ := s.Stats()
		if missRows != hostRows || missAll != all || hostRows == 0 || hostRows == all {
			t.Errorf("%s: stats after GatherMisses %d of %d, after Gather %d of %d", c.dt, missRows, missAll, hostRows, all)
		}
		for i, v := range ids {
			g, w := got[i*dim:(i+1)*dim], want[i*dim:(i+1)*dim]
			if slot[v] >= 0 && slices.ContainsFunc(g, func(x float32) bool { return !math.IsNaN(float64(x)) }) {
				t.Errorf("%s: row %d (vertex %d, cached) written: %v", c.dt, i, v, g)
			}
			if slot[v] < 0 && !slices.Equal(g, w) {
				t.Errorf("%s: row %d (vertex %d, a miss) %v, Gather's %v", c.dt, i, v, g, w)
			}
		}
		s.Free()
	}
}

func readI32(t *testing.T, be backend.Backend, b backend.Buffer, n int) []int32 {
	t.Helper()
	out := make([]int32, n)
	be.Read(out, b, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTieredBand: Band gives the rows ranked after the cache's slots
// -2 - k in rank order (clipped to the ranking), and every gather reads
// the same rows as without it, bit for bit (float32 and bfloat16 tiers),
// counting band rows as host rows; a second Band, or a Fill after it, is
// refused.
func TestTieredBand(t *testing.T) {
	const rows, dim, cached = 40, 3, 10
	f32, bits, _, ids := tables(rows, dim)
	order := strided(rows, 7)
	for _, c := range []struct {
		feat   any
		dt     backend.DType
		banded int
	}{{f32, backend.F32, 12}, {bits, backend.BF16, 12}, {f32, backend.BF16, 12}, {f32, backend.F32, 1000}} {
		be := cpu.New(1)
		plain, err := NewTiered(be, c.feat, dim, order, c.dt)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewTiered(be, c.feat, dim, order, c.dt)
		if err != nil {
			t.Fatal(err)
		}
		if err := plain.Fill(cached); err != nil {
			t.Fatal(err)
		}
		if err := s.Fill(cached); err != nil {
			t.Fatal(err)
		}
		if err := s.Band(c.banded); err != nil {
			t.Fatal(err)
		}
		want := min(c.banded, rows-cached)
		if s.BandRows() != want {
			t.Fatalf("%s: %d rows in the band, want %d", c.dt, s.BandRows(), want)
		}
		_, sb := s.Tiers()
		slot := readI32(t, be, sb, rows)
		for i, v := range order {
			w := int32(-1)
			switch {
			case i < cached:
				w = int32(i)
			case i < cached+want:
				w = int32(-2 - (i - cached))
			}
			if slot[v] != w {
				t.Fatalf("%s: vertex %d (rank %d) has slot %d, want %d", c.dt, v, i, slot[v], w)
			}
		}
		if !slices.ContainsFunc(ids, func(v int32) bool { return slot[v] <= -2 }) {
			t.Fatalf("%s: no id has a band row: the case tests nothing", c.dt)
		}
		got, exp := gatherAll(t, be, s, ids), gatherAll(t, be, plain, ids)
		if !slices.Equal(f32Bits(got), f32Bits(exp)) {
			t.Errorf("%s: rows with a band of %d differ from the rows without", c.dt, want)
		}
		hostRows, all, _ := s.Stats()
		plainHost, plainAll, _ := plain.Stats()
		if hostRows != plainHost || all != plainAll {
			t.Errorf("%s: stats %d of %d with the band, %d of %d without", c.dt, hostRows, all, plainHost, plainAll)
		}
		misses := gatherWith(t, be, dim, ids, s.GatherMisses)
		for i, v := range ids {
			if slot[v] < 0 && !slices.Equal(f32Bits(misses[i*dim:(i+1)*dim]), f32Bits(exp[i*dim:(i+1)*dim])) {
				t.Errorf("%s: the miss of vertex %d (slot %d) differs from its row", c.dt, v, slot[v])
			}
		}
		if s.Band(1) == nil || s.Fill(1) == nil {
			t.Errorf("%s: a second Band or a Fill after Band was not refused", c.dt)
		}
		plain.Free()
		s.Free()
	}
}

func f32Bits(x []float32) []uint32 {
	out := make([]uint32, len(x))
	for i, v := range x {
		out[i] = math.Float32bits(v)
	}
	return out
}

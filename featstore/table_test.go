package featstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// gatherAll gathers rows ids of s on be and reads them back.
func gatherAll(t *testing.T, be backend.Backend, s Store, ids []int32) []float32 {
	return gatherWith(t, be, s.Dim(), ids, s.Gather)
}

// gatherWith runs gather of rows ids (dim values each) on be into rows
// filled with NaN first and reads them back.
func gatherWith(t *testing.T, be backend.Backend, dim int, ids []int32, gather func(ids backend.Buffer, n backend.Count, out backend.Buffer)) []float32 {
	t.Helper()
	idb, err := be.Upload(slices.Clone(ids))
	if err != nil {
		t.Fatal(err)
	}
	cnt, err := be.Upload([]int32{int32(len(ids))})
	if err != nil {
		t.Fatal(err)
	}
	out, err := be.Alloc(backend.F32, len(ids)*dim)
	if err != nil {
		t.Fatal(err)
	}
	be.Fill(out, math.NaN())
	gather(idb, backend.Count{Buf: cnt, Cap: len(ids)}, out)
	got := make([]float32, len(ids)*dim)
	be.Read(got, out, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return got
}

// tables is a random float32 table, its bfloat16 bits and the bits'
// float32 values, with random ids to gather.
func tables(rows, dim int) (f32 []float32, bits []uint16, widened []float32, ids []int32) {
	rnd := rand.New(rand.NewPCG(3, 4))
	f32 = make([]float32, rows*dim)
	for i := range f32 {
		f32[i] = float32(rnd.NormFloat64())
	}
	bits = backend.ToBF16(f32)
	widened = make([]float32, len(bits))
	for i, h := range bits {
		widened[i] = backend.BF16Float(h)
	}
	ids = make([]int32, 2*rows)
	for i := range ids {
		ids[i] = int32(rnd.IntN(rows))
	}
	return f32, bits, widened, ids
}

// rowsOf is rows ids of a [rows, dim] table.
func rowsOf(table []float32, dim int, ids []int32) []float32 {
	var out []float32
	for _, v := range ids {
		out = append(out, table[int(v)*dim:int(v+1)*dim]...)
	}
	return out
}

// TestUploadAsConverts: a table held as float32 or as bfloat16 bits is
// kept as asked (0: as held) and gathers the values of that dtype: a
// float32 table kept as bfloat16 equals the bfloat16 table, which kept as
// float32 (widened) gathers the same values.
func TestUploadAsConverts(t *testing.T) {
	const rows, dim = 70000, 3 // more rows than one conversion chunk
	f32, bits, widened, ids := tables(rows, dim)
	be := cpu.New(1)
	for _, c := range []struct {
		name   string
		feat   any
		dt     backend.DType
		wantDT backend.DType
		want   []float32
	}{
		{"float32 as held", f32, 0, backend.F32, f32},
		{"float32 as bfloat16", f32, backend.BF16, backend.BF16, widened},
		{"bfloat16 as held", bits, 0, backend.BF16, widened},
		{"bfloat16 as bfloat16", bits, backend.BF16, backend.BF16, widened},
		{"bfloat16 as float32", bits, backend.F32, backend.F32, widened},
	} {
		s, err := UploadAs(be, c.feat, dim, c.dt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := s.Table().DType(); got != c.wantDT || s.Rows() != rows {
			t.Errorf("%s: table %v of %d rows, want %v of %d", c.name, got, s.Rows(), c.wantDT, rows)
		}
		if got := gatherAll(t, be, s, ids); !slices.Equal(got, rowsOf(c.want, dim, ids)) {
			t.Errorf("%s: gathered rows differ", c.name)
		}
		s.Free()
	}
	if _, err := UploadAs(be, []int32{1, 2, 3}, 3, 0); err == nil {
		t.Error("an int32 table was taken")
	}
}

// TestTieredFromBF16: a tiered store over bfloat16 bits, with part of the
// table cached, gathers what one over the float32 table rounded to
// bfloat16 gathers, and kept as float32 the bits' values.
func TestTieredFromBF16(t *testing.T) {
	const rows, dim = 300, 4
	f32, bits, widened, ids := tables(rows, dim)
	order := make([]int32, rows)
	for i := range order {
		order[i] = int32(rows - 1 - i)
	}
	be := cpu.New(1)
	for _, c := range []struct {
		feat any
		dt   backend.DType
	}{{f32, backend.BF16}, {bits, 0}, {bits, backend.F32}} {
		t.Run(fmt.Sprintf("%T as %v", c.feat, c.dt), func(t *testing.T) {
			s, err := NewTiered(be, c.feat, dim, order, c.dt)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Free()
			if err := s.Fill(100); err != nil {
				t.Fatal(err)
			}
			if got := gatherAll(t, be, s, ids); !slices.Equal(got, rowsOf(widened, dim, ids)) {
				t.Error("gathered rows differ from the bfloat16 values")
			}
			host, _, err := s.Stats()
			if err != nil || host == 0 || host == int64(len(ids)) {
				t.Errorf("%d of %d rows from the host tier (%v): want both tiers read", host, len(ids), err)
			}
		})
	}
}

// TestUploadShardWidens: a shard of a bfloat16 table holds the rows'
// float32 values; an id outside the table is an error, not a panic.
func TestUploadShardWidens(t *testing.T) {
	const rows, dim = 50, 3
	_, bits, widened, ids := tables(rows, dim)
	be := cpu.New(1)
	sh, err := UploadShard(be, bits, dim, ids[:20])
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSharded(be, rows, []backend.Rows{sh}, 0, make([]int32, rows), indexOf(ids[:20], rows), make([]uint8, rows))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	if got := gatherAll(t, be, s, ids[:20]); !slices.Equal(got, rowsOf(widened, dim, ids[:20])) {
		t.Error("the shard's rows differ from the bfloat16 values")
	}
	if _, err := UploadShard(be, bits, dim, []int32{rows}); err == nil {
		t.Error("an id outside the table was taken")
	}
}

// indexOf maps each vertex to its (last) place in ids.
func indexOf(ids []int32, rows int) []int32 {
	index := make([]int32, rows)
	for i, v := range ids {
		index[v] = int32(i)
	}
	return index
}

package featstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// memFile is a RowFile over bytes in memory, as feat.npy lays rows out;
// reads of rows at or past cut fail as a truncated file's do.
type memFile struct {
	data     []byte
	rowBytes int64
	cut      int64
	reads    atomic.Int64 // ReadRows calls (the readers call it at once)
}

func (m *memFile) RowBytes() int64 { return m.rowBytes }
func (m *memFile) ReadRows(p []byte, first int64) error {
	m.reads.Add(1)
	n := int64(len(p)) / m.rowBytes
	if first+n > m.cut {
		return errors.New("feat.npy: truncated")
	}
	copy(p, m.data[first*m.rowBytes:])
	return nil
}

// fileOf lays a float32 table or bfloat16 bits out as feat.npy's rows do.
func fileOf(feat any, dim int) *memFile {
	var b []byte
	switch f := feat.(type) {
	case []float32:
		for _, v := range f {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		return &memFile{data: b, rowBytes: int64(4 * dim), cut: int64(len(f) / dim)}
	case []uint16:
		for _, v := range f {
			b = binary.LittleEndian.AppendUint16(b, v)
		}
		return &memFile{data: b, rowBytes: int64(2 * dim), cut: int64(len(f) / dim)}
	}
	panic(fmt.Sprintf("a table of %T", feat))
}

// TestDiskEqualsTiered: a disk store gathers the rows a tiered store over
// the whole table gathers, bit for bit, with its cache and host tier
// holding none, part or all of the rows (float32 and bfloat16 files, kept
// as either type), by Gather and by GatherMisses (which writes no cached
// row), twice through one call site with fewer live rows the second time;
// its counters say how many rows came from each tier and add up to the
// rows gathered. With the host tier's rows staged too (StageHost) every
// row and counter is the same.
func TestDiskEqualsTiered(t *testing.T) {
	const rows, dim = 40, 5
	f32, bits, _, ids := tables(rows, dim)
	order := make([]int32, rows)
	for i := range order {
		order[i] = int32((i * 7) % rows)
	}
	for _, feat := range []any{f32, bits} {
		for _, dt := range []backend.DType{backend.F32, backend.BF16} {
			for _, tc := range [][2]int{{0, 0}, {0, 12}, {7, 0}, {7, 12}, {7, rows}, {rows, 0}} {
				for _, stage := range []bool{false, true} {
					name := fmt.Sprintf("%T as %s, cache %d, host %d, host rows staged %t", feat, dt, tc[0], tc[1], stage)
					checkDisk(t, name, feat, dt, order, tc[0], tc[1], stage, ids)
				}
			}
		}
	}
}

func checkDisk(t *testing.T, name string, feat any, dt backend.DType, order []int32, cached, host int, stageHost bool, ids []int32) {
	const dim = 5
	be := cpu.New(2)
	ref, err := NewTiered(be, feat, dim, order, dt)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Free()
	ft := backend.F32
	if _, ok := feat.([]uint16); ok {
		ft = backend.BF16
	}
	d, err := NewDisk(be, DiskConfig{File: fileOf(feat, dim), FileType: ft, HostRows: int64(host), Readers: 3, StageHost: stageHost}, ref.Rows(), dim, order, dt)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	var in InPlace = d
	if err := ref.Fill(cached); err != nil {
		t.Fatal(err)
	}
	d.Reserve(len(ids))
	if err := d.Fill(cached); err != nil {
		t.Fatal(err)
	}
	if d.CachedRows() != min(cached, len(order)) || d.HostRows() != min(host, len(order)-d.CachedRows()) {
		t.Fatalf("%s: %d cached and %d host rows", name, d.CachedRows(), d.HostRows())
	}
	idb, _ := be.Upload(slices.Clone(ids))
	cnt, _ := be.Upload([]int32{-7, int32(len(ids))}) // the count at element 1, as a step's may lie
	out, _ := be.Alloc(backend.F32, len(ids)*dim)
	lives := []int{len(ids), len(ids) / 3, len(ids) / 2}
	for _, live := range lives {
		be.Write(cnt, 1, []int32{int32(live)})
		for _, misses := range []bool{false, true} {
			be.Fill(out, math.NaN())
			if misses {
				in.GatherMisses(idb, backend.Count{Buf: cnt, Off: 1, Cap: len(ids)}, out)
			} else {
				d.Gather(idb, backend.Count{Buf: cnt, Off: 1, Cap: len(ids)}, out)
			}
			got := make([]float32, len(ids)*dim)
			be.Read(got, out, 0)
			want := gatherAll(t, be, ref, ids[:live])
			for i := range len(ids) {
				g := got[i*dim : (i+1)*dim]
				skip := i >= live || (misses && slices.Contains(order[:cached], ids[i]))
				if skip && slices.ContainsFunc(g, func(x float32) bool { return !math.IsNaN(float64(x)) }) {
					t.Fatalf("%s, misses %t: row %d (vertex %d) written", name, misses, i, ids[i])
				}
				if !skip && !slices.Equal(g, want[i*dim:(i+1)*dim]) {
					t.Fatalf("%s, misses %t: row %d (vertex %d) %v, want %v", name, misses, i, ids[i], g, want[i*dim:(i+1)*dim])
				}
			}
		}
	}
	c, h, k, err := d.TierStats()
	if err != nil {
		t.Fatal(err)
	}
	var wc, wh, wk, rows int64
	for _, live := range lives {
		rows += 2 * int64(live)
		for _, v := range ids[:live] {
			switch i := slices.Index(order, v); {
			case i < cached:
				wc += 2
			case i < cached+host:
				wh += 2
			default:
				wk += 2
			}
		}
	}
	if c != wc || h != wh || k != wk {
		t.Errorf("%s: rows from cache, host, disk %d, %d, %d, want %d, %d, %d", name, c, h, k, wc, wh, wk)
	}
	if hr, all, _ := d.Stats(); hr != h+k || all != rows {
		t.Errorf("%s: Stats %d of %d rows, want %d", name, hr, all, rows)
	}
}

// TestDiskReadFails: a gather before Fill, one larger than Reserve said,
// and a row that cannot be read (the file cut short after it was checked)
// are errors of Stats and Err, naming what went wrong (and the file).
func TestDiskReadFails(t *testing.T) {
	const rows, dim = 20, 3
	f32, _, _, ids := tables(rows, dim)
	f := fileOf(f32, dim)
	be := cpu.New(1)
	order := make([]int32, rows)
	for i := range order {
		order[i] = int32(i)
	}
	d, err := NewDisk(be, DiskConfig{File: f, FileType: backend.F32}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	gatherAll(t, be, d, ids)
	if _, _, err := d.Stats(); err == nil || !strings.Contains(err.Error(), "a gather before Fill") {
		t.Errorf("Stats after a gather before Fill: %v", err)
	}
	d, err = NewDisk(be, DiskConfig{File: f, FileType: backend.F32}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	d.Reserve(len(ids) - 1)
	if err := d.Fill(0); err != nil {
		t.Fatal(err)
	}
	gatherAll(t, be, d, ids)
	if err := d.Err(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("a gather of %d rows, but Reserve said %d", len(ids), len(ids)-1)) {
		t.Errorf("a gather larger than Reserve: %v", err)
	}
	d, err = NewDisk(be, DiskConfig{File: f, FileType: backend.F32}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	d.Reserve(len(ids))
	if err := d.Fill(0); err != nil {
		t.Fatal(err)
	}
	f.cut = rows - 2
	gatherAll(t, be, d, ids)
	if _, _, err := d.Stats(); err == nil || !strings.Contains(err.Error(), "feat.npy: truncated") {
		t.Errorf("Stats after a failed read: %v", err)
	}
}

// TestDiskNeedsHostFuncs: a disk store on a backend without host
// functions fails when it is built, naming the backend and the interface.
func TestDiskNeedsHostFuncs(t *testing.T) {
	be := struct {
		backend.Backend
		backend.TieredGather
	}{cpu.New(1), cpu.New(1)}
	f32, _, _, _ := tables(4, 2)
	_, err := NewDisk(be, DiskConfig{File: fileOf(f32, 2), FileType: backend.F32}, 4, 2, nil, 0)
	if err == nil || !strings.Contains(err.Error(), "backend.HostFuncs") || !strings.Contains(err.Error(), be.Name()) {
		t.Errorf("NewDisk without host functions: %v", err)
	}
}

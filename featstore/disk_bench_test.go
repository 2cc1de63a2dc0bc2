package featstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// benchDisk is a filled disk store of rows rows (dim values each, as
// float32) whose ranking is a seeded permutation, with cached rows in the
// cache and host rows in the host tier, reserved for gathers of reserve
// rows, and the table in its file.
func benchDisk(tb testing.TB, be backend.Backend, rows, dim, cached, host, reserve int, stageHost bool) (*Disk, []float32) {
	tb.Helper()
	feat, order := randomTable(rows, dim)
	d, err := NewDisk(be, DiskConfig{File: fileOf(feat, dim), FileType: backend.F32, HostRows: int64(host), Readers: 4, StageHost: stageHost}, int64(rows), dim, order, 0)
	if err != nil {
		tb.Fatal(err)
	}
	d.Reserve(reserve)
	if err := d.Fill(cached); err != nil {
		tb.Fatal(err)
	}
	return d, feat
}

// randomTable is a seeded table of rows rows (dim float32 values each, from
// a normal distribution) and a seeded permutation of them as its ranking.
func randomTable(rows, dim int) ([]float32, []int32) {
	rnd := rand.New(rand.NewPCG(5, 6))
	feat := make([]float32, rows*dim)
	for i := range feat {
		feat[i] = float32(rnd.NormFloat64())
	}
	order := make([]int32, rows)
	for i, v := range rnd.Perm(rows) {
		order[i] = int32(v)
	}
	return feat, order
}

// tierIDs draws n ids of d's ranking: of every 1000, cache of them among
// the cached rows, host among the host tier's and the rest among the rows
// left on disk (repeats allowed), in a seeded order.
func tierIDs(d *Disk, n, cache, host int) []int32 {
	rnd := rand.New(rand.NewPCG(7, 8))
	c, h := d.CachedRows(), d.HostRows()
	ids := make([]int32, n)
	for i := range ids {
		switch k := i % 1000; {
		case k < cache:
			ids[i] = d.order[rnd.IntN(c)]
		case k < cache+host:
			ids[i] = d.order[c+rnd.IntN(h)]
		default:
			ids[i] = d.order[c+h+rnd.IntN(len(d.order)-c-h)]
		}
	}
	rnd.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return ids
}

// BenchmarkDiskPlace times the host function of a gather of 300k ids
// (98% of them cached, 1.5% in the host tier, 0.5% on disk) from a table
// of 2M rows, 4 values wide, on the CPU backend: place and the reads of
// the disk rows it does, the device's split of the ids it answers
// (SplitTiers) issued before it, untimed; and with the host tier's rows staged too
// (DiskConfig.StageHost: copied beside the reads).
func BenchmarkDiskPlace(b *testing.B) {
	for _, stage := range []bool{false, true} {
		b.Run(fmt.Sprint("stage-host=", stage), func(b *testing.B) { benchPlace(b, stage) })
	}
}

func benchPlace(b *testing.B, stageHost bool) {
	const rows, dim, n = 2 << 20, 4, 300_000
	be := cpu.New(2)
	d, _ := benchDisk(b, be, rows, dim, rows/2, rows/8, n, stageHost)
	defer d.Free()
	idb, _ := be.Upload(tierIDs(d, n, 980, 15))
	cnt, _ := be.Upload([]int32{n})
	for b.Loop() {
		b.StopTimer()
		d.split(d.sc, d.sc.sites[0], idb, backend.Count{Buf: cnt, Cap: n}, false)
		b.StartTimer()
		d.place(d.sc, d.sc.sites[0])
	}
	if _, _, err := d.Stats(); err != nil {
		b.Fatal(err)
	}
}

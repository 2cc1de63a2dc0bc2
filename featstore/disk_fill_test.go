package featstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestDiskFillReadsRuns: a tier that takes every row of the file reads
// it in runs of adjacent rows, however the ranking orders the vertices
// (a random permutation here, over 8 of Fill's chunks), and gathers the
// table's rows: Fill places a tier's rows by vertex, so a dense tier's
// reads are few. Read in rank order, nearly every row took a read of its
// own (114,757 of 131,072 here).
func TestDiskFillReadsRuns(t *testing.T) {
	const rows, dim = 1 << 17, 2
	feat, order := randomTable(rows, dim)
	rnd := rand.New(rand.NewPCG(3, 4))
	ids := make([]int32, 5000)
	for i := range ids {
		ids[i] = int32(rnd.IntN(rows))
	}
	for _, tc := range []struct{ cached, host int }{{rows, 0}, {0, rows}} {
		t.Run(fmt.Sprintf("cache=%d,host=%d", tc.cached, tc.host), func(t *testing.T) {
			be := cpu.New(2)
			file := fileOf(feat, dim)
			d, err := NewDisk(be, DiskConfig{File: file, FileType: backend.F32, HostRows: int64(tc.host), Readers: 4}, rows, dim, order, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free()
			d.Reserve(len(ids))
			if err := d.Fill(tc.cached); err != nil {
				t.Fatal(err)
			}
			// A run is at most maxRun rows, and each reader's share of a
			// chunk may cut one more.
			chunks := (rows + fillChunk - 1) / fillChunk
			if most := int64(rows/maxRun + chunks*4); file.reads.Load() > most {
				t.Errorf("Fill read the file %d times, want at most %d", file.reads.Load(), most)
			}
			if got := gatherAll(t, be, d, ids); !slices.Equal(got, rowsOf(feat, dim, ids)) {
				t.Error("the gathered rows differ from the table's")
			}
		})
	}
}

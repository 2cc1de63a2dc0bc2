package edgelist

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/graph"
)

// TestOffsetsPastInt32 checks the row offsets written for rows whose
// lengths carry the total past 2^31 and 2^32 entries: each is stored as
// the exact 64-bit sum, without the entries themselves.
func TestOffsetsPastInt32(t *testing.T) {
	var buf bytes.Buffer
	p := offsetWriter{w: bufio.NewWriter(&buf)}
	rows := []struct{ r, deg int64 }{
		{0, 1<<31 - 1}, // ends one short of 2^31
		{1, 1},         // ends at 2^31
		{3, 1 << 32},   // row 2 empty; ends at 2^32 + 2^31
		{4, 1<<32 - 1}, // ends at 2^33 + 2^31 - 1
	}
	for _, x := range rows {
		if err := p.row(x.r, x.deg); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.finish(6); err != nil {
		t.Fatal(err)
	}
	got := make([]int64, buf.Len()/8)
	for i := range got {
		got[i] = int64(binary.LittleEndian.Uint64(buf.Bytes()[8*i:]))
	}
	want := []int64{0, 1<<31 - 1, 1 << 31, 1 << 31, 1<<32 + 1<<31, 1<<33 + 1<<31 - 1, 1<<33 + 1<<31 - 1}
	if !slices.Equal(got, want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
	if err := p.row(2, 1); err == nil {
		t.Fatal("a row given out of order was taken")
	}
}

// TestKeysAtTheLargestIDs checks that keys of vertex ids up to 2^31-1
// unpack to themselves and sort by row, then column, as unsigned keys.
func TestKeysAtTheLargestIDs(t *testing.T) {
	top := int32(graph.MaxInt32Vertices - 1)
	pairs := [][2]int32{{top, top}, {top, 0}, {0, top}, {1 << 30, 1<<31 - 2}, {0, 0}, {top - 1, top}}
	var keys []uint64
	for _, p := range pairs {
		k := key(p[0], p[1])
		if r, c := unkey(k); r != p[0] || c != p[1] {
			t.Fatalf("key(%d, %d) unpacks to (%d, %d)", p[0], p[1], r, c)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i := 1; i < len(keys); i++ {
		r0, c0 := unkey(keys[i-1])
		r1, c1 := unkey(keys[i])
		if r0 > r1 || (r0 == r1 && c0 >= c1) {
			t.Fatalf("keys sort (%d, %d) before (%d, %d)", r0, c0, r1, c1)
		}
	}
}

// TestDiskNeededPastInt32 checks DiskNeeded's arithmetic for 2^31 and
// 2^32 edges.
func TestDiskNeededPastInt32(t *testing.T) {
	for _, edges := range []int64{1 << 31, 1 << 32} {
		n := int64(1<<31 - 1)
		// Directed, with a budget that takes them in one pass: runs and graph.
		o := Options{Directed: true, Memory: 1 << 40, Threads: 1}
		if got, want := DiskNeeded(edges, n, o), 8*edges+4*edges+8*(n+1); got != want {
			t.Fatalf("%d edges, one pass: %d bytes, want %d", edges, got, want)
		}
		// Symmetrized, a 64 KiB budget: two copies of the runs of 2x entries.
		o = Options{Memory: MinMemory, Threads: 2}
		if got, want := DiskNeeded(edges, n, o), 2*8*2*edges; got != want {
			t.Fatalf("%d edges, several passes: %d bytes, want %d", edges, got, want)
		}
	}
}

// TestMergeAcrossBlocks merges runs read a few keys at a time, with keys
// repeated within and across runs, and checks each distinct key comes out
// once, in order.
func TestMergeAcrossBlocks(t *testing.T) {
	dir := t.TempDir()
	s := &runSet{dir: dir}
	top := key(int32(graph.MaxInt32Vertices-1), 0) // the last row's keys
	sources := [][]uint64{{1, 2, 2, 9, top}, {2, 3, top}, {0, 9, 10, top + 1}, {}}
	var want []uint64
	for _, src := range sources {
		want = append(want, src...)
		if err := s.spill(slices.Clone(src), 1); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if len(s.runs) != 3 || s.disk != 11*keyBytes {
		t.Fatalf("%d runs of %d bytes, want 3 of %d (repeats within a run dropped, no empty run)", len(s.runs), s.disk, 11*keyBytes)
	}
	cs, err := openRuns(s.runs, make([]uint64, 6)) // two keys per run at a time
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	read, err := merge(context.Background(), cs, func(k uint64) error { got = append(got, k); return nil }, nil)
	if err := closeAll(cs); err != nil {
		t.Fatal(err)
	}
	if err != nil || read != 11 || !slices.Equal(got, want) {
		t.Fatalf("merged %v (%d keys read, %v), want %v of 11", got, read, err, want)
	}
	if err := s.remove(s.runs); err != nil || s.disk != 0 {
		t.Fatalf("removing the runs: %v, %d bytes left", err, s.disk)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

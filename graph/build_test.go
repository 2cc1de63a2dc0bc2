package graph

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomEdges returns m random edges over n vertices, with extra duplicates
// and self loops mixed in.
func randomEdges(r *rand.Rand, n, m int) (src, dst []int32) {
	for range m {
		u, v := int32(r.IntN(n)), int32(r.IntN(n))
		switch r.IntN(8) {
		case 0:
			v = u // self loop
		case 1:
			if len(src) > 0 { // repeat an earlier edge, maybe reversed
				j := r.IntN(len(src))
				u, v = src[j], dst[j]
				if r.IntN(2) == 0 {
					u, v = v, u
				}
			}
		}
		src, dst = append(src, u), append(dst, v)
	}
	return src, dst
}

// naiveRows builds the expected rows with maps and plain loops.
func naiveRows(n int, src, dst []int32, opt BuildOptions) [][]int32 {
	rows := make([][]int32, n)
	seen := map[[2]int32]bool{}
	add := func(u, v int32) {
		if opt.Dedup {
			if seen[[2]int32{u, v}] {
				return
			}
			seen[[2]int32{u, v}] = true
		}
		rows[u] = append(rows[u], v)
	}
	for i := range src {
		u, v := src[i], dst[i]
		if u == v && opt.DropSelfLoops {
			continue
		}
		add(u, v)
		if opt.Symmetrize && u != v {
			add(v, u)
		}
	}
	for _, r := range rows {
		slices.Sort(r)
	}
	return rows
}

func TestFromEdgesMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(40)
		m := r.IntN(200)
		if trial%50 == 0 {
			m = 0
		}
		src, dst := randomEdges(r, n, m)
		opt := BuildOptions{
			Symmetrize:    r.IntN(2) == 0,
			DropSelfLoops: r.IntN(2) == 0,
			Dedup:         r.IntN(2) == 0,
			Threads:       1 + r.IntN(4),
		}
		g, err := FromEdges(int64(n), src, dst, opt)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("trial %d: built graph invalid: %v", trial, err)
		}
		want := naiveRows(n, src, dst, opt)
		for v := range n {
			got := g.Neighbors32(int64(v))
			if !slices.Equal(got, want[v]) && !(len(got) == 0 && len(want[v]) == 0) {
				t.Fatalf("trial %d opt %+v: row %d = %v, want %v", trial, opt, v, got, want[v])
			}
		}
	}
}

// TestFromEdgesUndirectedInvariants checks the properties the generator
// relies on: symmetric, no self loops, no duplicates, sorted rows.
func TestFromEdgesUndirectedInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	opt := BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true}
	for trial := range 100 {
		n := 1 + r.IntN(60)
		src, dst := randomEdges(r, n, r.IntN(400))
		g, err := FromEdges(int64(n), src, dst, opt)
		if err != nil {
			t.Fatal(err)
		}
		has := map[[2]int32]bool{}
		for v := range int32(n) {
			row := g.Neighbors32(int64(v))
			for i, u := range row {
				if u == v {
					t.Fatalf("trial %d: self loop at %d", trial, v)
				}
				if i > 0 && row[i-1] >= u {
					t.Fatalf("trial %d: row %d not strictly ascending: %v", trial, v, row)
				}
				has[[2]int32{v, u}] = true
			}
		}
		for e := range has {
			if !has[[2]int32{e[1], e[0]}] {
				t.Fatalf("trial %d: edge %v without its reverse", trial, e)
			}
		}
		for i := range src {
			if src[i] != dst[i] && !has[[2]int32{src[i], dst[i]}] {
				t.Fatalf("trial %d: input edge %d (%d,%d) missing", trial, i, src[i], dst[i])
			}
		}
	}
}

func TestFromEdgesThreadIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	src, dst := randomEdges(r, 5000, 300000)
	opt := BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true, Threads: 1}
	g1, err := FromEdges(5000, src, dst, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []int{2, 3, 7} {
		opt.Threads = th
		g, err := FromEdges(5000, src, dst, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Indptr, g1.Indptr) || !slices.Equal(g.Indices, g1.Indices) {
			t.Fatalf("threads=%d gives a different graph than threads=1", th)
		}
	}
}

func TestFromEdgesErrors(t *testing.T) {
	src := []int32{0, 1, 2, 3, 1}
	dst := []int32{1, 2, 9, 0, -1}
	for _, th := range []int{1, 2, 4} {
		_, err := FromEdges(4, src, dst, BuildOptions{Threads: th})
		if err == nil || !strings.Contains(err.Error(), "edge 2 ") {
			t.Fatalf("threads=%d: got %v, want an error naming edge 2", th, err)
		}
	}
	if _, err := FromEdges(4, []int32{0}, nil, BuildOptions{}); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, err := FromEdges(-1, nil, nil, BuildOptions{}); err == nil {
		t.Fatal("negative vertex count accepted")
	}
	_, err := FromEdges(MaxInt32Vertices, nil, nil, BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "int64 ids not supported by FromEdges") {
		t.Fatalf("2^31 vertices: got %v", err)
	}
}

func TestFromEdgesProgress(t *testing.T) {
	src, dst := []int32{0, 1, 1}, []int32{1, 2, 2}
	last := map[string][2]int64{}
	opt := BuildOptions{Symmetrize: true, Dedup: true, Progress: func(s string, d, tot int64) {
		if d > tot || d < last[s][0] {
			t.Errorf("stage %s: done %d of %d after %d", s, d, tot, last[s][0])
		}
		last[s] = [2]int64{d, tot}
	}}
	if _, err := FromEdges(3, src, dst, opt); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"count", "scatter", "sort", "compact"} {
		if p, ok := last[s]; !ok || p[0] != p[1] {
			t.Errorf("stage %s: last report %v, want done == total", s, p)
		}
	}
}

// BenchmarkFromEdges builds an undirected graph from 4M random pairs over 1M
// vertices (8M directed entries before deduplication).
func BenchmarkFromEdges(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	n, m := 1<<20, 1<<22
	src, dst := make([]int32, m), make([]int32, m)
	for i := range src {
		src[i], dst[i] = int32(r.IntN(n)), int32(r.IntN(n))
	}
	b.SetBytes(int64(8 * m))
	for b.Loop() {
		if _, err := FromEdges(int64(n), src, dst, BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true}); err != nil {
			b.Fatal(err)
		}
	}
}

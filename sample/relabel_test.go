package sample

import (
	"slices"
	"testing"
)

// checkRelabel verifies the relabelling convention against a direct oracle.
func checkRelabel(t *testing.T, dst, nbrs, src, local []int32, nSrc int) {
	t.Helper()
	want := map[int32]int32{}
	var wantSrc []int32
	for i, v := range dst {
		if _, ok := want[v]; !ok {
			want[v] = int32(i)
		}
		wantSrc = append(wantSrc, v)
	}
	for _, v := range nbrs {
		if _, ok := want[v]; !ok {
			want[v] = int32(len(wantSrc))
			wantSrc = append(wantSrc, v)
		}
	}
	if nSrc != len(wantSrc) {
		t.Fatalf("nSrc = %d, want %d", nSrc, len(wantSrc))
	}
	if !slices.Equal(src, wantSrc[:len(src)]) {
		t.Fatalf("srcIDs = %v, want %v", src, wantSrc[:len(src)])
	}
	for e, v := range nbrs[:len(local)] {
		if local[e] != want[v] {
			t.Fatalf("local[%d] = %d, want %d (vertex %d)", e, local[e], want[v], v)
		}
		if int(local[e]) < len(src) && src[local[e]] != v {
			t.Fatalf("srcIDs[local[%d]] = %d, want %d", e, src[local[e]], v)
		}
	}
}

func TestRelabel(t *testing.T) {
	r := NewRelabeler(10)
	dst := []int32{7, 2, 5}
	nbrs := []int32{2, 9, 9, 0, 7, 3, 0, 5, 1}
	src := make([]int32, 16)
	local := make([]int32, len(nbrs))
	n := r.Relabel(dst, nbrs, src, local)
	if want := []int32{7, 2, 5, 9, 0, 3, 1}; n != len(want) || !slices.Equal(src[:n], want) {
		t.Fatalf("srcIDs = %v (n %d), want %v", src[:n], n, want)
	}
	if want := []int32{1, 3, 3, 4, 0, 5, 4, 2, 6}; !slices.Equal(local, want) {
		t.Fatalf("local = %v, want %v", local, want)
	}
	// A second call must not see the first call's ids.
	n = r.Relabel([]int32{1}, []int32{9, 1, 4}, src, local[:3])
	if n != 3 || !slices.Equal(src[:3], []int32{1, 9, 4}) || !slices.Equal(local[:3], []int32{1, 0, 2}) {
		t.Fatalf("second call: n %d src %v local %v", n, src[:3], local[:3])
	}
}

func TestRelabelRandom(t *testing.T) {
	r := NewRelabeler(300)
	for seed := uint64(0); seed < 20; seed++ {
		dst := randomIDs(seed, 300, 40, seed%2 == 0) // odd seeds repeat destinations
		nbrs := randomIDs(seed+100, 300, 500, false)
		for _, capacity := range []int{0, 10, 40, 100, 1000} {
			src := make([]int32, capacity)
			local := make([]int32, len(nbrs))
			n := r.Relabel(dst, nbrs, src, local)
			checkRelabel(t, dst, nbrs, src[:min(n, capacity)], local, n)
		}
		// Short local: only the first entries are written.
		local := make([]int32, 7)
		src := make([]int32, 1000)
		n := r.Relabel(dst, nbrs, src, local)
		checkRelabel(t, dst, nbrs, src[:n], local, n)
	}
}

func TestRelabelAliasedDst(t *testing.T) {
	r := NewRelabeler(50)
	src := make([]int32, 100)
	copy(src, []int32{4, 8, 15, 16})
	dst := src[:4]
	nbrs := []int32{16, 23, 42, 4, 23}
	local := make([]int32, len(nbrs))
	n := r.Relabel(dst, nbrs, src, local)
	if want := []int32{4, 8, 15, 16, 23, 42}; !slices.Equal(src[:n], want) {
		t.Fatalf("srcIDs = %v, want %v", src[:n], want)
	}
	if want := []int32{3, 4, 5, 0, 4}; !slices.Equal(local, want) {
		t.Fatalf("local = %v, want %v", local, want)
	}
}

func TestRelabelGenerationWrap(t *testing.T) {
	r := NewRelabeler(5)
	r.Relabel([]int32{1}, []int32{2}, make([]int32, 4), make([]int32, 1))
	r.gen = 1<<32 - 1 // next call wraps and must clear the old stamps
	r.stamp[3] = 1<<32 | 0
	src := make([]int32, 4)
	local := make([]int32, 2)
	n := r.Relabel([]int32{0}, []int32{3, 2}, src, local)
	if n != 3 || !slices.Equal(local, []int32{1, 2}) {
		t.Fatalf("after wrap: n %d local %v", n, local)
	}
}

package inproc

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

func group(t *testing.T, n int) ([]backend.Backend, []*Comm) {
	bes := make([]backend.Backend, n)
	for i := range bes {
		bes[i] = cpu.New(1)
	}
	cs, err := New(bes)
	if err != nil {
		t.Fatal(err)
	}
	return bes, cs
}

// TestAllReduce: three ranks reducing concurrently, several times over,
// all get the rank-order sum and the maximum.
func TestAllReduce(t *testing.T) {
	bes, cs := group(t, 3)
	var wg sync.WaitGroup
	got := make([][]float32, 3)
	gotI := make([][]int32, 3)
	for r := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, _ := bes[r].Upload([]float32{float32(r), 0.5, -float32(r)})
			i, _ := bes[r].Upload([]int32{int32(r), -int32(r), 7})
			for range 5 {
				cs[r].AllReduceSum(f)
				cs[r].AllReduceMax(i)
			}
			got[r], gotI[r] = make([]float32, 3), make([]int32, 3)
			bes[r].Read(got[r], f, 0)
			bes[r].Read(gotI[r], i, 0)
		}()
	}
	wg.Wait()
	// After five sums: x·3^4 · (sum over ranks) grows; check the first.
	for r := range cs {
		if got[r][0] != 3*81 || got[r][1] != 1.5*81 || got[r][2] != -3*81 {
			t.Errorf("rank %d: sums %v", r, got[r])
		}
		if gotI[r][0] != 2 || gotI[r][1] != 0 || gotI[r][2] != 7 {
			t.Errorf("rank %d: maxima %v", r, gotI[r])
		}
	}
}

// TestAbortReleasesWaiters: a rank waiting for a reduction that another
// rank will never join returns once the group is aborted, and Err says why.
func TestAbortReleasesWaiters(t *testing.T) {
	bes, cs := group(t, 2)
	buf, _ := bes[0].Upload([]float32{1})
	done := make(chan struct{})
	go func() {
		cs[0].AllReduceSum(buf)
		close(done)
	}()
	time.Sleep(10 * time.Millisecond)
	cs[1].Abort(errors.New("out of memory"))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting rank was not released")
	}
	if err := cs[0].Err(); err == nil || err.Error() != "rank 1: out of memory" {
		t.Fatalf("Err: %v", err)
	}
}

// TestAllToAll: four ranks exchanging I32 and F32 chunks several times
// over each get chunk r of every rank's send buffer, in rank order.
func TestAllToAll(t *testing.T) {
	const n, chunk = 4, 3
	bes, cs := group(t, n)
	var wg sync.WaitGroup
	gotI := make([][]int32, n)
	gotF := make([][]float32, n)
	for r := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			si, sf := make([]int32, n*chunk), make([]float32, n*chunk)
			for i := range si {
				si[i] = int32(100*r + i) // chunk p = i / chunk
				sf[i] = float32(r) + float32(i)/64
			}
			bi, _ := bes[r].Upload(si)
			bf, _ := bes[r].Upload(sf)
			ri, _ := bes[r].Alloc(backend.I32, n*chunk)
			rf, _ := bes[r].Alloc(backend.F32, n*chunk)
			for range 3 {
				cs[r].AllToAll(bi, ri, chunk)
				cs[r].AllToAll(bf, rf, chunk)
			}
			gotI[r], gotF[r] = make([]int32, n*chunk), make([]float32, n*chunk)
			bes[r].Read(gotI[r], ri, 0)
			bes[r].Read(gotF[r], rf, 0)
		}()
	}
	wg.Wait()
	for r := range n {
		for p := range n {
			for k := range chunk {
				if w := int32(100*p + r*chunk + k); gotI[r][p*chunk+k] != w {
					t.Fatalf("rank %d, from %d, element %d: %d, want %d", r, p, k, gotI[r][p*chunk+k], w)
				}
				if w := float32(p) + float32(r*chunk+k)/64; gotF[r][p*chunk+k] != w {
					t.Fatalf("rank %d, from %d, element %d: %v, want %v", r, p, k, gotF[r][p*chunk+k], w)
				}
			}
		}
	}
	if err := cs[0].Err(); err != nil {
		t.Fatal(err)
	}
}

// TestAllToAllMismatch: ranks passing different chunks abort the group
// instead of hanging or reading past a buffer.
func TestAllToAllMismatch(t *testing.T) {
	bes, cs := group(t, 2)
	var wg sync.WaitGroup
	for r := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chunk := 2 + r
			b, _ := bes[r].Alloc(backend.I32, 2*chunk)
			cs[r].AllToAll(b, b, chunk)
		}()
	}
	wg.Wait()
	if cs[0].Err() == nil {
		t.Fatal("no error")
	}
}

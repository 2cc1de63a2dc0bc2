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

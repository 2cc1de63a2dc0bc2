package cpu

import (
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend"
)

// TestMarkTimesWork: two marks around an op span at least the op's time,
// and a mark of another backend is refused.
func TestMarkTimesWork(t *testing.T) {
	be := New(1)
	defer be.Close()
	const n, dim = 4096, 256
	x, _ := be.Alloc(backend.F32, n*dim)
	cnt, _ := be.Upload([]int32{n})
	before, err := be.Mark()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	be.BiasActDropout(x, backend.Count{Buf: cnt, Cap: n}, dim, nil, true, 0, backend.Rand{}, nil, x)
	took := time.Since(start)
	after, _ := be.Mark()
	d, err := after.Since(before)
	if err != nil {
		t.Fatal(err)
	}
	if d < took || d <= 0 {
		t.Fatalf("marks span %v around an op that took %v", d, took)
	}
	if _, err := after.Since(otherMark{}); err == nil {
		t.Fatal("a foreign mark was accepted")
	}
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
}

type otherMark struct{}

func (otherMark) Since(backend.Mark) (time.Duration, error) { return 0, nil }
func (otherMark) Close()                                    {}

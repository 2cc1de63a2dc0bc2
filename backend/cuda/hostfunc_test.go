package cuda

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend"
)

// TestHostFuncInOrder: a host function sees what the ops before it wrote
// into mapped host memory, and the ops after it read what it wrote, eagerly
// and as a host node of a captured graph, run once per replay.
func TestHostFuncInOrder(t *testing.T) {
	b := openTest(t, Options{})
	seen, doubled := []int32{-1, -1, -1, -1}, make([]int32, 4)
	seenB, err := b.UploadHost(seen)
	if err != nil {
		t.Fatal(err)
	}
	doubledB, err := b.UploadHost(doubled)
	if err != nil {
		t.Fatal(err)
	}
	table := upload(t, b, []int32{5, 6, 7, 8})
	ids := upload(t, b, []int32{3, 2, 1, 0})
	out := alloc(t, b, backend.I32, 4)
	n := countBuf(t, b, 4, 4)
	var runs atomic.Int32
	issue := func() {
		b.Gather(table, 1, ids, n, seenB)
		b.HostFunc(func() {
			runs.Add(1)
			for i, v := range seen {
				doubled[i] = 2 * v
			}
		})
		b.Gather(doubledB, 1, ids, n, out)
	}
	issue()
	if got := readI32(t, b, out, 4); !slices.Equal(got, []int32{10, 12, 14, 16}) || runs.Load() != 1 {
		t.Fatalf("eager: %v after %d runs, want [10 12 14 16] after 1", got, runs.Load())
	}
	before := b.hostFns.live()
	g := captureGraph(t, b, issue)
	defer g.Close()
	if runs.Load() != 1 {
		t.Fatalf("the host function ran while captured (%d runs)", runs.Load())
	}
	for r, vals := range [][]int32{{1, 2, 3, 4}, {-3, 0, 9, 11}} {
		b.Write(table, 0, vals)
		g.Launch()
		want := []int32{2 * vals[0], 2 * vals[1], 2 * vals[2], 2 * vals[3]}
		if got := readI32(t, b, out, 4); !slices.Equal(got, want) || int(runs.Load()) != r+2 {
			t.Errorf("replay %d: %v after %d runs, want %v after %d", r, got, runs.Load(), want, r+2)
		}
	}
	if held := b.hostFns.live(); held != before+1 {
		t.Errorf("the captured graph holds %d host functions in the table, want 1", held-before)
	}
	g.Close()
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if held := b.hostFns.live(); held != before {
		t.Errorf("%d host functions left in the table after the graph was closed and the stream drained, want %d", held, before)
	}
	b.Free(seenB)
	b.Free(doubledB)
}

// TestHostFuncTable: an eager function runs once and is forgotten; a
// captured one runs at every replay until its graph is closed, and still
// runs after the Close until the stream drains (dropRetired). No device:
// the table alone.
func TestHostFuncTable(t *testing.T) {
	h := &hostFuncs{fns: map[uintptr]hostFunc{}}
	var eager, kept int
	h.fns[1] = hostFunc{fn: func() { eager++ }}
	h.fns[2] = hostFunc{fn: func() { kept++ }, keep: true}
	h.run(1)
	h.run(1)
	h.run(2)
	h.run(2)
	if eager != 1 || kept != 2 || h.live() != 1 {
		t.Fatalf("eager ran %d times (want 1), captured %d (want 2), %d left (want 1)", eager, kept, h.live())
	}
	h.retire([]uintptr{2})
	h.run(2) // a replay enqueued before the graph's Close
	if kept != 3 || h.live() != 1 {
		t.Fatalf("after retiring: captured ran %d times (want 3), %d left (want 1)", kept, h.live())
	}
	h.dropRetired()
	h.run(2)
	if kept != 3 || h.live() != 0 || len(h.retired) != 0 {
		t.Fatalf("after dropping: captured ran %d times (want 3), %d left, %d retired (want 0, 0)", kept, h.live(), len(h.retired))
	}
	h.fns[3] = hostFunc{fn: func() {}, keep: true}
	h.forget([]uintptr{3, 4})
	if h.live() != 0 {
		t.Fatalf("forget left %d", h.live())
	}
}

// BenchmarkHostFuncNode times a host function node of a replayed graph:
// graphs of nine small gathers in a chain, plain and with an empty host
// function between each two, replayed back to back; a node costs the
// difference over eight (reported as µs/node in the nodes=8 run).
func BenchmarkHostFuncNode(b *testing.B) {
	be := openTest(b, Options{})
	table := upload(b, be, []int32{5, 6, 7, 8})
	ids := upload(b, be, []int32{3, 2, 1, 0})
	out := alloc(b, be, backend.I32, 4)
	n := countBuf(b, be, 4, 4)
	var plain float64
	for _, nodes := range []int{0, 8} {
		b.Run(fmt.Sprint("nodes=", nodes), func(b *testing.B) {
			g := captureGraph(b, be, func() {
				for i := range 9 {
					be.Gather(table, 1, ids, n, out)
					if i < nodes {
						be.HostFunc(func() {})
					}
				}
			})
			defer g.Close()
			g.Launch()
			if err := be.Sync(); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for range b.N {
				g.Launch()
			}
			if err := be.Sync(); err != nil {
				b.Fatal(err)
			}
			per := float64(time.Since(start).Microseconds()) / float64(b.N)
			if nodes == 0 {
				plain = per
				return
			}
			b.ReportMetric((per-plain)/float64(nodes), "µs/node")
		})
	}
}

package train

import (
	"errors"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// fitPlan is a one-hop plan whose counts sit at offsets 0 (edges) and 1
// (sources), with the given capacities.
func fitPlan(edges, srcs int) *Plan {
	b := &backend.Block{NumEdges: backend.Count{Off: 0, Cap: edges}, NumSrc: backend.Count{Off: 1, Cap: srcs}}
	return &Plan{Fanouts: []int{1}, Blocks: []*backend.Block{b}}
}

// TestUntilFits: a sample that overflows is grown and sampled again until
// it fits, returning the sizes that fitted; a plan that cannot overflow
// returns at once; a growth that raises nothing fails after maxGrowths
// with the overflow named; a failing sample or growth stops it.
func TestUntilFits(t *testing.T) {
	p := fitPlan(4, 4)
	live := []int32{10, 3} // the step needs 10 edges
	samples := 0
	sample := func() (*Plan, []int32, error) { samples++; return p, live, nil }
	grow := func(q *Plan, counts []int32) error {
		b := q.Blocks[0]
		b.NumEdges.Cap = min(int(counts[0]), b.NumEdges.Cap*2) // at most doubling: 8, then 10
		return nil
	}
	got, err := untilFits("step 1", sample, grow)
	if err != nil || got[0] != 10 || samples != 3 || p.Blocks[0].NumEdges.Cap != 10 {
		t.Fatalf("got %v, %v after %d samples at capacity %d; want [10 3], nil after 3 at 10", got, err, samples, p.Blocks[0].NumEdges.Cap)
	}

	tightless := func() (*Plan, []int32, error) { return p, nil, nil }
	if got, err := untilFits("eval", tightless, grow); got != nil || err != nil {
		t.Fatalf("a plan that cannot overflow: %v, %v", got, err)
	}

	stuck := fitPlan(4, 4)
	samples = 0
	_, err = untilFits("step 7", func() (*Plan, []int32, error) { samples++; return stuck, live, nil },
		func(*Plan, []int32) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "step 7") || !strings.Contains(err.Error(), "10 edges") || samples != maxGrowths+1 {
		t.Fatalf("stuck growth: %v after %d samples, want an error naming step 7 and the 10 edges after %d", err, samples, maxGrowths+1)
	}

	boom := func(*Plan, []int32) error { return errors.New("no memory") }
	if _, err := untilFits("step 2", func() (*Plan, []int32, error) { return fitPlan(1, 1), live, nil }, boom); err == nil || err.Error() != "no memory" {
		t.Fatalf("failing growth: %v", err)
	}
	if _, err := untilFits("step 3", func() (*Plan, []int32, error) { return nil, nil, errors.New("sync") }, grow); err == nil || err.Error() != "sync" {
		t.Fatalf("failing sample: %v", err)
	}
}

package multigpu

import (
	"slices"
	"testing"
)

// TestTopologyMatchesWholeGraph: with the graph partitioned over 2 and 4
// CPU devices and sampled through pointer tables, training gives bitwise
// the losses of the same devices each holding the whole graph (a seed's
// neighbourhood does not depend on where lists live), the ranks'
// parameters stay equal, and the reads split by where the lists lived:
// without replication no replica is read, with every list replicated
// nothing is read remotely, and in between all three kinds are.
func TestTopologyMatchesWholeGraph(t *testing.T) {
	ds, cfg := tiny(t)
	for _, n := range []int{2, 4} {
		want, _ := run(t, ds, cfg, n, true)
		for _, budget := range []int64{0, 1 << 16, 1 << 40} {
			var topo *Topology
			got, hashes, _ := runSummary(t, ds, cfg, n, true, func(ranks []Rank) {
				var err error
				if topo, err = PlaceTopology(ds, ranks, budget); err != nil {
					t.Fatal(err)
				}
			})
			if !slices.Equal(got, want) {
				t.Fatalf("%d devices, replicate %d: losses differ from the whole graph's", n, budget)
			}
			for r := 1; r < n; r++ {
				if !slices.Equal(hashes[r], hashes[0]) {
					t.Fatalf("%d devices: rank %d's parameters differ from rank 0's", n, r)
				}
			}
			reads, err := topo.Reads()
			if err != nil {
				t.Fatal(err)
			}
			st := topo.Stats
			t.Logf("%d devices, replicate %d bytes (%d vertices): edge cut %.3f, balance %.3f; reads local %d, replica %d, remote %d",
				n, budget, len(topo.Replicated), st.Cut, st.Balance, reads.Local, reads.Replica, reads.Remote)
			switch {
			case reads.Local == 0:
				t.Errorf("no local reads")
			case budget == 0 && (reads.Replica != 0 || reads.Remote == 0):
				t.Errorf("without replication: %+v", reads)
			case budget == 1<<40 && (reads.Remote != 0 || reads.Replica == 0):
				t.Errorf("every list replicated: %+v", reads)
			case budget == 1<<16 && (reads.Replica == 0 || reads.Remote == 0):
				t.Errorf("some lists replicated: %+v", reads)
			}
			if st.Balance > 1.06 {
				t.Errorf("%d devices: balance %.3f", n, st.Balance)
			}
		}
	}
}

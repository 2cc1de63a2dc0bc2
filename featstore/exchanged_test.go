package featstore

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/graph"
)

// TestExchanged: 2 ranks (one host) and 4 ranks (two hosts of two), with
// and without reuse, gather random id lists through the exchange and get
// exactly the whole table's rows; the counters say how many rows each
// rank held, asked of its host, asked of the other host and reused; the
// host's count of what a gather asks of one peer (Asks) is the device's;
// chunks set below a gather's asks flag it, and grown, gather exactly.
func TestExchanged(t *testing.T) {
	const n, dim = 500, 5
	rnd := rand.New(rand.NewPCG(1, 2))
	src, dst := make([]int32, 3*n), make([]int32, 3*n)
	for i := range src {
		src[i], dst[i] = int32(rnd.IntN(n)), int32(rnd.IntN(n))
	}
	g, err := graph.FromEdges(n, src, dst, graph.BuildOptions{Symmetrize: true, DropSelfLoops: true, Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	feat := make([]float32, n*dim)
	for i := range feat {
		feat[i] = rnd.Float32()*2 - 1
	}
	for _, c := range []struct{ ranks, perHost int }{{2, 2}, {4, 2}} {
		for _, reuse := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dx%d/reuse=%v", c.ranks/c.perHost, c.perHost, reuse), func(t *testing.T) {
				exchangeCase(t, g, feat, dim, c.ranks, c.perHost, reuse)
			})
		}
	}
}

func exchangeCase(t *testing.T, g *graph.CSR, feat []float32, dim, ranks, perHost int, reuse bool) {
	l, err := PlaceHosts(g, ranks, perHost, HighestDegree(g, 20))
	if err != nil {
		t.Fatal(err)
	}
	bes := make([]backend.Backend, ranks)
	for r := range bes {
		bes[r] = cpu.New(1)
	}
	comms, err := inproc.New(bes)
	if err != nil {
		t.Fatal(err)
	}
	n := int(g.NumNodes)
	const rounds, cp = 5, 120
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = exchangeRank(bes[r], comms[r], l, feat, dim, n, rounds, cp, reuse)
			if errs[r] != nil {
				comms[r].Abort(errs[r])
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

// exchangeRank gathers rounds of random ids (live counts varying, a
// capacity that grows once) and checks rows and counters.
func exchangeRank(be backend.Backend, comm *inproc.Comm, l *Layout, feat []float32, dim, n, rounds, cp int, reuse bool) error {
	s, err := NewExchanged(be, comm, feat, dim, l, reuse)
	if err != nil {
		return err
	}
	defer s.Free()
	rank := comm.Rank()
	where, _ := l.Where(rank)
	rnd := rand.New(rand.NewPCG(uint64(rank), 7))
	var want ExchangeCounts
	kept := map[int32]bool{}
	keepRows := 0
	var prev []int32 // the live ids of the gather before, all kept
	for round := range rounds {
		c := cp
		if round >= 2 {
			c = cp + 40 // a grown envelope: the chunks grow, the kept rows are forgotten
		}
		if c != keepRows {
			kept, keepRows, prev = map[int32]bool{}, c, nil
		}
		live := c - rnd.IntN(30)
		ids := make([]int32, c)
		for i, v := range rnd.Perm(n)[:c] {
			ids[i] = int32(v)
		}
		idb, _ := be.Upload(ids)
		cnt, _ := be.Upload([]int32{int32(live)})
		out, _ := be.Alloc(backend.F32, c*dim)
		s.Gather(idb, backend.Count{Buf: cnt, Cap: c}, out)
		got := make([]float32, c*dim)
		be.Read(got, out, 0)
		if err := be.Sync(); err != nil {
			return err
		}
		if err := comm.Err(); err != nil {
			return err
		}
		// The host's count of what the gather asks of one peer is the
		// device's.
		if last, _, err := s.Need(false); err != nil || last != s.Asks(ids[:live], prev) {
			return fmt.Errorf("round %d: the gather asked %d rows of one peer, the host counts %d (%v)", round, last, s.Asks(ids[:live], prev), err)
		}
		prev = ids[:live]
		next := map[int32]bool{}
		for i, v := range ids[:live] {
			for k := range dim {
				if got[i*dim+k] != feat[int(v)*dim+k] {
					return fmt.Errorf("round %d: row %d (vertex %d) value %d: %v, want %v", round, i, v, k, got[i*dim+k], feat[int(v)*dim+k])
				}
			}
			w := where[v]
			switch p := int(-w - 1); {
			case w >= 0:
				want.Own++
			case reuse && kept[v]:
				want.Reused++
			case p/l.PerHost == rank/l.PerHost:
				want.Host++
			default:
				want.Other++
			}
			if w < 0 && i < keepRows {
				next[v] = true
			}
		}
		kept = next
		be.Free(idb)
		be.Free(cnt)
		be.Free(out)
	}
	st, err := s.Counts()
	if err != nil {
		return err
	}
	if st.Own != want.Own || st.Host != want.Host || st.Other != want.Other || st.Reused != want.Reused || st.Overflow != 0 || st.Gathers != int64(rounds) {
		return fmt.Errorf("counts %+v, want %+v", st, want)
	}

	if reuse && want.Reused == 0 {
		return fmt.Errorf("no row reused")
	}
	if l.Ranks/l.PerHost > 1 && want.Other == 0 {
		return fmt.Errorf("no row from the other host")
	}
	return tightChunks(be, comm, s, feat, dim, n, rnd)
}

// tightChunks gathers through chunks of 4 rows (every rank alike): the
// gather that asks more of a peer is flagged with its need and leaves rows
// unwritten; gathered again through chunks grown to the need agreed over
// the ranks, the same ids get every row exactly, including the rows the
// flagged gather got and kept.
func tightChunks(be backend.Backend, comm *inproc.Comm, s *Exchanged, feat []float32, dim, n int, rnd *rand.Rand) error {
	const c = 100
	ids := make([]int32, c)
	for i, v := range rnd.Perm(n)[:c] {
		ids[i] = int32(v)
	}
	idb, _ := be.Upload(ids)
	cnt, _ := be.Upload([]int32{c})
	out, _ := be.Alloc(backend.F32, c*dim)
	clock, _ := be.Upload([]int32{3, 7})
	flag, _ := be.Upload([]int32{0, 0, 0})
	defer func() {
		for _, b := range []backend.Buffer{idb, cnt, out, clock, flag} {
			be.Free(b)
		}
	}()
	if err := s.SizeChunks(4); err != nil {
		return err
	}
	before, err := s.Counts()
	if err != nil {
		return err
	}
	s.Gather(idb, backend.Count{Buf: cnt, Cap: c}, out)
	s.FlagOverflow(clock, flag)
	last, _, err := s.Need(true)
	if err != nil {
		return err
	}
	f := make([]int32, 3)
	be.Read(f, flag, 0)
	after, err := s.Counts()
	if err != nil {
		return err
	}
	if (last > 4) != (f[0] == 1) || (f[0] == 1 && (f[1] != 3 || f[2] != 7)) || (last > 4) != (after.Overflow > before.Overflow) {
		return fmt.Errorf("need %d of chunks of 4: flag %v, %d rows past the chunks", last, f, after.Overflow-before.Overflow)
	}
	agreed, _ := be.Upload([]int32{int32(last)})
	defer be.Free(agreed)
	comm.AllReduceMax(agreed)
	a := make([]int32, 1)
	be.Read(a, agreed, 0)
	if err := be.Sync(); err != nil {
		return err
	}
	if a[0] <= 4 {
		return fmt.Errorf("no rank asked more of a peer than chunks of 4 hold (%d)", a[0])
	}
	if err := s.SizeChunks(int(a[0])); err != nil {
		return err
	}
	s.Gather(idb, backend.Count{Buf: cnt, Cap: c}, out)
	got := make([]float32, c*dim)
	be.Read(got, out, 0)
	if err := be.Sync(); err != nil {
		return err
	}
	for i, v := range ids {
		for k := range dim {
			if got[i*dim+k] != feat[int(v)*dim+k] {
				return fmt.Errorf("after growing: row %d (vertex %d) value %d: %v, want %v", i, v, k, got[i*dim+k], feat[int(v)*dim+k])
			}
		}
	}
	return comm.Err()

}

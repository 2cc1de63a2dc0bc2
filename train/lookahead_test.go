package train

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
)

// TestReplayLookahead: a ring of L+1 plans (L = 1, 2, 3) replays the
// eager run bit for bit over two epochs cut into runs (Segment) that go
// round the ring more than once, or are shorter than L, launched once a
// step and captured once; with the next steps prepared after the step
// (InOrder); through forced overflows at L = 2, which grow the envelope
// and capture the ring again; and with a remote store, whose rows each
// plan fetches into its own (the first step's gathers write L+1 row
// buffers). Each twin costs its plan's bytes in the envelope's report.
func TestReplayLookahead(t *testing.T) {
	ds, cfg, want, wantParams, small := overflowCase(t)
	var bytes1 int64
	for _, c := range []struct {
		ahead, segment int
		inOrder        bool
		overflow       bool
		remote         bool
		wantGrownBytes bool
	}{
		{ahead: 1, segment: 7}, {ahead: 2, segment: 7}, {ahead: 3, segment: 7, wantGrownBytes: true}, {ahead: 3, segment: 2},
		{ahead: 3, segment: 7, inOrder: true}, {ahead: 2, segment: 7, overflow: true},
		{ahead: 2, segment: 7, remote: true}, {ahead: 3, segment: 2, remote: true}, {ahead: 2, segment: 7, remote: true, overflow: true},
	} {
		what := fmt.Sprintf("lookahead %d, segment %d, in order %t, forced overflows %t, remote %t", c.ahead, c.segment, c.inOrder, c.overflow, c.remote)
		be := record.New(cpu.New(2))
		res, err := featstore.Upload(be, ds.Features, ds.FeatDim)
		if err != nil {
			t.Fatal(err)
		}
		store := &rowsLog{Resident: res, remote: c.remote}
		var got []float32
		tr, err := New(be, ds, cfg, Options{Features: store, GatherRows: true, OnStep: func(_, _ int, l float32) {
			got = append(got, l)
			store.done = true
		}})
		if err != nil {
			t.Fatal(err)
		}
		opt := ReplayOptions{Lookahead: c.ahead, InOrder: c.inOrder, Segment: c.segment}
		if c.overflow {
			// A copy: growth raises the envelope's ideal sizes in place.
			opt.Caps, opt.Margin = slices.Clone(small), 1.01
		}
		_, st, err := tr.RunReplay(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		gotParams := params(t, tr)
		tr.Close()
		sameRun(t, what+": against eager", got, want, gotParams, wantParams)
		if c.overflow {
			if st.Overflows == 0 || st.Captures < 2 {
				t.Fatalf("%s: no overflow forced: %+v", what, st)
			}
		} else if st.Overflows != 0 || st.Captures != 1 || st.Launches != len(want) {
			t.Fatalf("%s: stats %+v, want no overflow, one capture, %d launches", what, st, len(want))
		}
		if steps := len(want) / cfg.Epochs; steps <= c.segment || (c.segment < c.ahead+2 && c.segment >= c.ahead) {
			t.Fatalf("%s: %d steps an epoch: the case wants several runs, round the ring or shorter than it looks ahead", what, steps)
		}
		wantOuts := 1
		if c.remote {
			wantOuts = c.ahead + 1
		}
		if !c.overflow && len(store.outs) != wantOuts {
			t.Fatalf("%s: the first step's gathers wrote %d row buffers, want %d", what, len(store.outs), wantOuts)
		}
		switch {
		case c.ahead == 1 && !c.remote && !c.overflow:
			bytes1 = st.Envelope.Bytes
		case c.wantGrownBytes && st.Envelope.Bytes <= bytes1:
			t.Fatalf("%s: envelope of %d bytes, not above lookahead 1's %d", what, st.Envelope.Bytes, bytes1)
		}
		t.Logf("%s: %d launches, %d overflows, %d captures", what, st.Launches, st.Overflows, st.Captures)
	}
}

// landLog is a resident store whose gathers the replay driver starts
// ahead and lands later (featstore.Ahead, ahead steps ahead) and, with
// remote, fetches ahead (featstore.Remote). A gather started into site k
// zeroes its rows and Land(k) gathers the rows for that start's ids,
// read when the land runs: rows learnt before their land, or landed after
// their plan was sampled again, are wrong, and the losses differ. A gather
// outside a site is whole. Starts and lands note when their ops run (host
// functions), in events.
type landLog struct {
	*featstore.Resident
	be     backend.Backend
	ahead  int
	remote bool
	cur    int              // the site gathers start; -1: whole gathers
	sites  map[int]landArgs // each site's last start
	events []landEvent
	stray  int // lands of sites never started, and starts past the ring
}

type landArgs struct {
	ids backend.Buffer
	n   backend.Count
	out backend.Buffer
}

// landEvent is a start (land false) or a land of site k, as it ran.
type landEvent struct {
	land bool
	k    int
}

func (s *landLog) Remote() bool   { return s.remote }
func (s *landLog) Lookahead() int { return s.ahead }
func (s *landLog) AheadSite(k int) {
	if k > s.ahead {
		s.stray++
	}
	s.cur = k
}

func (s *landLog) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	if s.cur < 0 {
		s.Resident.Gather(ids, n, out)
		return
	}
	s.sites[s.cur] = landArgs{ids, n, out}
	s.note(landEvent{false, s.cur})
	s.be.Fill(out, 0)
}

func (s *landLog) Land(k int) {
	a, ok := s.sites[k]
	if !ok {
		s.stray++
		return
	}
	s.note(landEvent{true, k})
	s.Resident.Gather(a.ids, a.n, a.out)
}

// note issues the noting of e when the ops issued before it have run.
func (s *landLog) note(e landEvent) {
	s.be.(backend.HostFuncs).HostFunc(func() { s.events = append(s.events, e) })
}

// check fails the test unless every start was landed once, after it and
// before the next start into the same site, in the order of the starts,
// with at most and at some point most starts in flight.
func (s *landLog) check(t *testing.T, what string, most int) {
	t.Helper()
	if s.stray > 0 {
		t.Fatalf("%s: %d lands of sites never started or sites past the ring", what, s.stray)
	}
	var pending []int
	high := 0
	for i, e := range s.events {
		switch {
		case !e.land && slices.Contains(pending, e.k):
			t.Fatalf("%s: event %d starts into site %d, whose start was not landed", what, i, e.k)
		case !e.land:
			pending = append(pending, e.k)
			high = max(high, len(pending))
		case len(pending) == 0 || pending[0] != e.k:
			t.Fatalf("%s: event %d lands site %d, not the oldest start in flight (%d in flight)", what, i, e.k, len(pending))
		default:
			pending = pending[1:]
		}
	}
	if len(pending) != 0 {
		t.Fatalf("%s: %d starts never landed", what, len(pending))
	}
	if high != most {
		t.Fatalf("%s: at most %d starts in flight, want %d", what, high, most)
	}
}

// TestReplayLanderStore: a store that lands its gathers later gets them
// landed in the replay driver's ring, each once, in order, before the step
// that learns its rows (which match the eager run's bit for bit): with the
// store's lookahead (2 or 3, which wins over the options' 5), in runs
// round the ring (Segment 7 of 10 steps) or shorter than it looks ahead
// (2), through forced overflows, and in order. A store gathered in the step (not
// remote) has whole gathers only.
func TestReplayLanderStore(t *testing.T) {
	ds, cfg, want, wantParams, small := overflowCase(t)
	for _, c := range []struct {
		remote, overflow, inOrder bool
		ahead, segment, most      int
	}{
		{remote: true, segment: 7, most: 2}, {remote: true, ahead: 3, segment: 7, most: 3}, {remote: true, ahead: 3, segment: 2, most: 3},
		{remote: true, overflow: true, segment: 7, most: 2}, {remote: true, inOrder: true, segment: 7, most: 2}, {remote: false, segment: 7, most: 0},
	} {
		what := fmt.Sprintf("remote %t, lookahead %d, segment %d, forced overflows %t, in order %t", c.remote, c.ahead, c.segment, c.overflow, c.inOrder)
		be := record.New(cpu.New(2))
		res, err := featstore.Upload(be, ds.Features, ds.FeatDim)
		if err != nil {
			t.Fatal(err)
		}
		store := &landLog{Resident: res, be: be, ahead: max(c.ahead, 2), remote: c.remote, cur: -1, sites: map[int]landArgs{}}
		opt := ReplayOptions{Lookahead: 5, InOrder: c.inOrder, Segment: c.segment} // the store's lookahead wins
		if c.overflow {
			// A copy: growth raises the envelope's ideal sizes in place.
			opt.Caps, opt.Margin = slices.Clone(small), 1.01
		}
		var st *ReplayStats
		got, gotParams := lossesOfWith(t, be, ds, cfg, Options{Features: store, GatherRows: true}, func(tr *Trainer) (err error) {
			_, st, err = tr.RunReplay(context.Background(), opt)
			return err
		})
		sameRun(t, what+": against eager", got, want, gotParams, wantParams)
		if c.overflow && st.Overflows == 0 {
			t.Fatalf("%s: no overflow forced: %+v", what, st)
		}
		store.check(t, what, c.most)
		t.Logf("%s: %d gathers and lands, %d overflows", what, len(store.events)/2, st.Overflows)
	}
}

// lossesOfWith is lossesOf with the trainer's options opt (OnStep set
// here).
func lossesOfWith(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg Config, opt Options, run func(*Trainer) error) ([]float32, [][]float32) {
	t.Helper()
	var losses []float32
	opt.OnStep = func(_, _ int, l float32) { losses = append(losses, l) }
	tr, err := New(be, ds, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := run(tr); err != nil {
		t.Fatal(err)
	}
	return losses, params(t, tr)
}

package train

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/nn"
)

// rowsLog is a resident store that notes the row buffers its gathers
// write until the first training step is done; remote makes it a
// featstore.Remote store, whose rows the replay driver fetches a step
// ahead.
type rowsLog struct {
	*featstore.Resident
	remote bool
	done   bool
	outs   []backend.Buffer
}

func (s *rowsLog) Remote() bool { return s.remote }

func (s *rowsLog) Gather(ids backend.Buffer, n backend.Count, out backend.Buffer) {
	if !s.done && !slices.Contains(s.outs, out) {
		s.outs = append(s.outs, out)
	}
	s.Resident.Gather(ids, n, out)
}

// TestFetchAhead: a remote store's rows are gathered into the plan's rows
// and its twin's (which the step before fills), a resident store's into
// the plan's alone; either way replay equals eager, with the envelope
// observed and through forced overflows that re-run steps.
func TestFetchAhead(t *testing.T) {
	ds, cfg, want, wantParams, small := overflowCase(t)
	for _, remote := range []bool{false, true} {
		for _, caps := range [][]nn.Caps{nil, small} {
			be := record.New(cpu.New(2))
			res, err := featstore.Upload(be, ds.Features, ds.FeatDim)
			if err != nil {
				t.Fatal(err)
			}
			store := &rowsLog{Resident: res, remote: remote}
			var got []float32
			// GatherRows: a resident table would otherwise be read in place
			// (TestTableInput), and there would be no rows to fetch.
			tr, err := New(be, ds, cfg, Options{Features: store, GatherRows: true, OnStep: func(_, _ int, l float32) {
				got = append(got, l)
				store.done = true
			}})
			if err != nil {
				t.Fatal(err)
			}
			opt := ReplayOptions{}
			if caps != nil {
				opt = ReplayOptions{Caps: caps, Margin: 1.01}
			}
			_, st, err := tr.RunReplay(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			gotParams := params(t, tr)
			tr.Close()
			what := fmt.Sprintf("remote %t, forced overflows %t", remote, caps != nil)
			if caps != nil && st.Overflows == 0 {
				t.Fatalf("%s: no overflow", what)
			}
			sameRun(t, what+": against eager", got, want, gotParams, wantParams)
			wantOuts := 1
			if remote {
				wantOuts = 2
			}
			if caps == nil && len(store.outs) != wantOuts {
				t.Fatalf("%s: the first step's gathers wrote %d row buffers, want %d", what, len(store.outs), wantOuts)
			}
		}
	}
}

package featstore

import (
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestTieredNeedsTieredGather: a tiered store on a backend without the
// two-tier gather fails when it is built, naming the backend and the
// capability; a direct store works on it.
func TestTieredNeedsTieredGather(t *testing.T) {
	const rows, dim = 10, 4
	f32, _, _, ids := tables(rows, dim)
	be := struct{ backend.Backend }{cpu.New(1)} // the required core only
	_, err := NewTiered(be, f32, dim, nil, 0)
	if err == nil {
		t.Fatal("a tiered store was built on a backend without the two-tier gather")
	}
	for _, want := range []string{be.Name(), "backend.TieredGather"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	s, err := UploadAs(be, f32, dim, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	if got, want := gatherAll(t, be, s, ids), rowsOf(f32, dim, ids); !slices.Equal(got, want) {
		t.Error("the direct store's rows differ from the table's")
	}
}

package train

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestTypedCompactSources: RGAT's plan numbers each relation's own
// sources (TypedHops.Compact): every edge's source there is its source in
// the type's numbering (SrcIDs[Indices[e]] = Rels' Indices[e]), each
// source once, in order of first appearance, within one type after the
// destinations (own source i the type's row i), as many as the edges read
// (and the destinations); at least one relation reads fewer sources than
// its type has, so the model projects fewer rows. No relation of rsage's
// is compacted.
func TestTypedCompactSources(t *testing.T) {
	ds := heteroTiny(t)
	for _, model := range []string{"rgat", "rsage"} {
		tr, err := New(cpu.New(2), ds, heteroConfig(t, model), Options{})
		if err != nil {
			t.Fatal(err)
		}
		th := tr.plan.Typed
		fewer := false
		for s := range 2 {
			counts := sampleTyped(t, tr, s)
			for l := range th.Caps {
				for r, rel := range ds.Relations {
					cb := th.Compact[l][r]
					if want := model == "rgat"; (cb != nil) != want {
						t.Fatalf("%s layer %d relation %s: compacted %t, want %t", model, l, rel.Name, cb != nil, want)
					}
					if cb == nil || th.Caps[l].Types[rel.Dst].Dst == 0 {
						continue
					}
					e, n := int(counts[cb.NumEdges.Off]), int(counts[cb.NumSrc.Off])
					typeIdx, own, ids := readI32(t, tr.be, th.Rels[l][r].Indices, e), readI32(t, tr.be, cb.Indices, e), readI32(t, tr.be, cb.SrcIDs, n)
					first := map[int32]int32{}
					if rel.Src == rel.Dst {
						for i := range int32(readCount(t, tr.be, cb.NumDst)) {
							first[i] = i
						}
					}
					for k := range e {
						if _, ok := first[typeIdx[k]]; !ok {
							first[typeIdx[k]] = int32(len(first))
						}
						if own[k] != first[typeIdx[k]] || ids[own[k]] != typeIdx[k] {
							t.Fatalf("layer %d relation %s edge %d: type row %d, own %d (want %d), own row's type row %d", l, rel.Name, k, typeIdx[k], own[k], first[typeIdx[k]], ids[own[k]])
						}
					}
					if n != len(first) {
						t.Fatalf("layer %d relation %s: %d own sources, its edges read %d", l, rel.Name, n, len(first))
					}
					fewer = fewer || n < int(counts[th.Src[l][rel.Src].Off])
				}
			}
		}
		if model == "rgat" && !fewer {
			t.Error("rgat: every compacted relation reads all its type's sources")
		}
		tr.Close()
	}
}

// readI32 reads the first n values of buf.
func readI32(t *testing.T, be backend.Backend, buf backend.Buffer, n int) []int32 {
	t.Helper()
	out := make([]int32, max(n, 1))
	be.Read(out, buf, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return out[:n]
}

package backendtest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
)

// testSplitTiers: SplitTiers writes each live position's cache row (0
// outside the cache) and lists exactly the positions read in place (host
// tier rows below stageFrom, each with its code) and, apart, those the
// host fetches, each with its vertex (a row elsewhere) or its code (a
// host tier row from stageFrom on), in any order, after the entries each
// count held; positions past the count are untouched, and stats counts
// the positions. Without the cache rows and the stats the same lists.
// With no host tier row staged, all, and those from the middle of the tier
// on, and over a count of many warps.
func testSplitTiers(e *env) {
	for _, c := range []struct{ rows, cp, live int }{{50, 40, 29}, {3000, 2500, 2311}} {
		for _, from := range []int{c.rows, 0, c.rows / 6} {
			e.checkSplit(fmt.Sprintf("SplitTiers rows=%d live=%d stageFrom=%d", c.rows, c.live, from), c.rows, c.cp, c.live, from)
		}
	}
}

func (e *env) checkSplit(what string, rows, cp, live, stageFrom int) {
	e.t.Helper()
	const before, beforeP, counted = 3, 2, 11
	slot := make([]int32, rows) // a third cached, a third in the host tier, a third elsewhere
	for v, k := range e.rnd.Perm(rows) {
		switch k % 3 {
		case 0:
			slot[v] = int32(k / 3)
		case 1:
			slot[v] = int32(-2 - k/3)
		default:
			slot[v] = -1
		}
	}
	ids := e.liveIDs(rows, cp, live)
	cached := e.upload(slices.Repeat([]int32{-5}, cp))
	place, list := e.upload(slices.Repeat([]int32{-9}, 2*cp)), e.upload(slices.Repeat([]int32{-9}, 2*cp))
	placeN, listN, stats := e.upload([]int32{beforeP}), e.upload([]int32{before}), e.upload([]int64{counted})
	e.tiered().SplitTiers(e.upload(slot), e.upload(ids), e.count(live, cp), stageFrom, cached, place, placeN, list, listN, stats)
	gc := e.readI32(cached, cp)
	var wantP, wantL []string
	for i, v := range ids {
		wc := int32(-5)
		if i < live {
			c := slot[v]
			wc = max(c, 0)
			inPlace := c <= -2 && int(-2-c) < stageFrom
			switch {
			case inPlace:
				wantP = append(wantP, fmt.Sprint(i, c))
			case c == -1:
				wantL = append(wantL, fmt.Sprint(i, v))
			case c <= -2:
				wantL = append(wantL, fmt.Sprint(i, c))
			}
		}
		if gc[i] != wc {
			e.t.Fatalf("%s: position %d (vertex %d, code %d): cache row %d, want %d", what, i, v, slot[v], gc[i], wc)
		}
	}
	if got := readBack[int64](e, stats, 1)[0]; got != counted+int64(live) {
		e.t.Fatalf("%s: stats %d, want %d", what, got, counted+live)
	}
	gotP := e.checkSplitList(what+": in place", place, placeN, beforeP, cp, wantP)
	gotL := e.checkSplitList(what+": fetched", list, listN, before, cp, wantL)
	if len(gotL) == 0 || (stageFrom > 0 && len(gotP) == 0) {
		e.t.Fatalf("%s: %d positions in place and %d fetched listed: the case tests too little", what, len(gotP), len(gotL))
	}
	// Without the cache rows and the stats, the same lists.
	place2, list2 := e.upload(slices.Repeat([]int32{-9}, 2*cp)), e.upload(slices.Repeat([]int32{-9}, 2*cp))
	placeN2, listN2 := e.upload([]int32{beforeP}), e.upload([]int32{before})
	e.tiered().SplitTiers(e.upload(slot), e.upload(ids), e.count(live, cp), stageFrom, nil, place2, placeN2, list2, listN2, nil)
	if !slices.Equal(e.checkSplitList(what+": in place, alone", place2, placeN2, beforeP, cp, wantP), gotP) ||
		!slices.Equal(e.checkSplitList(what+": fetched, alone", list2, listN2, before, cp, wantL), gotL) {
		e.t.Fatalf("%s: without the cache rows, other lists", what)
	}
}

// checkSplitList checks that list holds exactly want's entries (position,
// then code or vertex) after its count's first before, in any order, and
// nothing past them; it returns them sorted.
func (e *env) checkSplitList(what string, list, listN backend.Buffer, before, cp int, want []string) []string {
	e.t.Helper()
	n := int(e.readI32(listN, 1)[0]) - before
	gl := e.readI32(list, 2*cp)
	if n != len(want) {
		e.t.Fatalf("%s: %d positions listed, want %d", what, n, len(want))
	}
	var got []string
	for j := before; j < before+n; j++ {
		got = append(got, fmt.Sprint(gl[2*j], gl[2*j+1]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		e.t.Fatalf("%s: listed %s, want %s", what, strings.Join(got, ","), strings.Join(want, ","))
	}
	if gl[0] != -9 || (before+n < cp && gl[2*(before+n)] != -9) {
		e.t.Fatalf("%s: list entries outside the new ones written", what)
	}
	return got
}

package backendtest

import (
	"fmt"
	"slices"
	"strings"
)

// testSplitTiers: SplitTiers writes each live position's cache row (0
// outside the cache), host tier row where it is read in place (below
// stageFrom; else the skip) and the staging's skip, and lists exactly the
// positions the host fetches, each with its vertex (a row elsewhere) or
// its code (a host tier row from stageFrom on), in any order, after the
// entries the count held; positions past the count are untouched; without
// a list it writes the same rows. With no host tier row staged, all, and
// those from the middle of the tier on, and over a count of many warps.
func testSplitTiers(e *env) {
	for _, c := range []struct{ rows, cp, live int }{{50, 40, 29}, {3000, 2500, 2311}} {
		for _, from := range []int{c.rows, 0, c.rows / 6} {
			e.checkSplit(fmt.Sprintf("SplitTiers rows=%d live=%d stageFrom=%d", c.rows, c.live, from), c.rows, c.cp, c.live, from)
		}
	}
}

func (e *env) checkSplit(what string, rows, cp, live, stageFrom int) {
	e.t.Helper()
	const hostSkip, stageSkip, before = 777, 888, 3
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
	poison := slices.Repeat([]int32{-5}, cp)
	cached, hosted, staged := e.upload(poison), e.upload(poison), e.upload(poison)
	list := e.upload(slices.Repeat([]int32{-9}, 2*cp))
	listN := e.upload([]int32{before})
	e.tiered().SplitTiers(e.upload(slot), e.upload(ids), e.count(live, cp), stageFrom, hostSkip, stageSkip, cached, hosted, staged, list, listN)
	gc, gh, gs := e.readI32(cached, cp), e.readI32(hosted, cp), e.readI32(staged, cp)
	var want []string
	for i, v := range ids {
		wc, wh, ws := int32(-5), int32(-5), int32(-5)
		if i < live {
			c := slot[v]
			wc, wh, ws = max(c, 0), hostSkip, stageSkip
			inPlace := c <= -2 && int(-2-c) < stageFrom
			if inPlace {
				wh = -2 - c
			}
			switch {
			case c == -1:
				want = append(want, fmt.Sprint(i, v))
			case c <= -2 && !inPlace:
				want = append(want, fmt.Sprint(i, c))
			}
		}
		if gc[i] != wc || gh[i] != wh || gs[i] != ws {
			e.t.Fatalf("%s: position %d (vertex %d, code %d): rows %d, %d, %d, want %d, %d, %d", what, i, v, slot[v], gc[i], gh[i], gs[i], wc, wh, ws)
		}
	}
	n := int(e.readI32(listN, 1)[0]) - before
	gl := e.readI32(list, 2*cp)
	if n != len(want) || n == 0 {
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
	// Without a list the same rows, nothing listed.
	c2, h2, s2 := e.upload(poison), e.upload(poison), e.upload(poison)
	e.tiered().SplitTiers(e.upload(slot), e.upload(ids), e.count(live, cp), stageFrom, hostSkip, stageSkip, c2, h2, s2, nil, nil)
	if !slices.Equal(e.readI32(c2, cp), gc) || !slices.Equal(e.readI32(h2, cp), gh) || !slices.Equal(e.readI32(s2, cp), gs) {
		e.t.Fatalf("%s: without a list, other rows", what)
	}
}

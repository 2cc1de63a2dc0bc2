package backendtest

import (
	"fmt"
	"math"
)

// testGatherListed: the rows an answered list names land at their
// positions, a staging row (x >= 0) or a host tier row (x <= -2) each,
// bfloat16 widened exactly, in float32 and bfloat16, at widths of the
// four-value and the one-value kernels; an entry of -1, the positions no
// entry names and the entries past the count (which name rows outside
// both tables) write nothing; the stats count the staging's and the host
// tier's rows; a count of many warps, and one of more words than the
// device's threads hold at once.
func testGatherListed(e *env) {
	for _, bf16 := range []bool{false, true} {
		for _, dim := range []int{1, 3, 16, 33} {
			for _, c := range []struct{ rows, m, cp int }{{40, 25, 30}, {3000, 2200, 2500}, {40000, 30000, 32000}} {
				if c.rows > 3000 && dim != 33 {
					continue // one case of more words than a wave of threads holds: the kernel loops
				}
				e.checkListed(fmt.Sprintf("GatherListed dim=%d bfloat16=%t entries=%d", dim, bf16, c.m), c.rows, c.m, c.cp, dim, bf16)
			}
		}
	}
}

func (e *env) checkListed(what string, rows, m, cp, dim int, bf16 bool) {
	e.t.Helper()
	const hostRows, stageRows = 70, 50
	hb, host := e.uploadHost(e.randF32(hostRows*dim, 1), bf16)
	sb, stage := e.uploadHost(e.randF32(stageRows*dim, 1), bf16)
	defer e.be.Free(hb)
	defer e.be.Free(sb)
	list := make([]int32, 2*cp)
	want := make([]float32, rows*dim)
	for i := range want {
		want[i] = float32(math.NaN())
	}
	var counts [2]int64
	for j, i := range e.rnd.Perm(rows)[:cp] {
		list[2*j] = int32(i)
		if j >= m { // past the count: rows neither table has
			list[2*j+1] = stageRows + 5
			continue
		}
		switch k := e.rnd.IntN(3); k {
		case 0:
			x := e.rnd.IntN(stageRows)
			list[2*j+1] = int32(x)
			copy(want[i*dim:(i+1)*dim], stage[x*dim:(x+1)*dim])
			counts[0]++
		case 1:
			p := e.rnd.IntN(hostRows)
			list[2*j+1] = int32(-2 - p)
			copy(want[i*dim:(i+1)*dim], host[p*dim:(p+1)*dim])
			counts[1]++
		default:
			list[2*j+1] = -1
		}
	}
	out := e.poison(rows * dim)
	stats := e.upload([]int64{5, 7})
	e.tiered().GatherListed(hb, sb, dim, e.upload(list), e.count(m, cp), out, stats)
	checkEqual(e.t, what, f32bits(e.readF32(out, rows*dim)), f32bits(want), dim)
	if counts[0] == 0 || counts[1] == 0 {
		e.t.Fatalf("%s: %v rows of staging and host tier: the case tests nothing", what, counts)
	}
	e.checkCounts(what+": stats", stats, []int64{5 + counts[0], 7 + counts[1]})
}

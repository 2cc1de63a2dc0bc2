package cuda

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBeside: sampling issued on the side stream, beside sampling on the
// stream (eagerly, then in a captured graph replayed twice), gives the CPU
// backend's samples on both; the side uses scratch of its own; Beside
// refuses to nest.
func TestBeside(t *testing.T) {
	gpu := openTest(t, Options{})
	csr, seeds, fanouts := samplingCase(rand.New(rand.NewPCG(15, 16)))
	here := newSampler3(t, gpu, csr, seeds, fanouts)
	side := newSampler3(t, gpu, csr, seeds, fanouts)
	here.step(fanouts) // step 0 on the stream
	gpu.Beside(func() { side.step(fanouts) })
	gpu.Join()
	must(t, gpu)
	if p0, p1 := gpu.scratch[0][scratchScan].ptr, gpu.scratch[1][scratchScan].ptr; p1 == 0 || p1 == p0 {
		t.Fatalf("scan scratch: stream %#x, side %#x; want the side's own", p0, p1)
	}
	sameAsCPU(t, gpu, side, csr, seeds, fanouts, 0)

	replayTwice(t, gpu, func() { // steps 1 and 2
		gpu.Beside(func() { side.step(fanouts) })
		here.step(fanouts)
		gpu.Join()
	})
	sameAsCPU(t, gpu, here, csr, seeds, fanouts, 2)
	sameAsCPU(t, gpu, side, csr, seeds, fanouts, 2)

	gpu.Beside(func() { gpu.Beside(func() {}) })
	if err := gpu.Sync(); err == nil || !strings.Contains(err.Error(), "nest") {
		t.Fatalf("nested Beside: Sync returned %v, want an error saying Beside may not nest", err)
	}
}

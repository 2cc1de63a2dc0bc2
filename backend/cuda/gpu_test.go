package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/backendtest"
	"github.com/fanout-gnn/fanout/rng"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return openTest(t, Options{}) })
}

// TestConformanceCapacityGemm runs the suite with the Linear ops
// multiplying the whole capacity (the path used while capturing graphs).
func TestConformanceCapacityGemm(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return openTest(t, Options{CapacityGemm: true}) })
}

func TestAvailable(t *testing.T) {
	name, err := Available(Options{})
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Available's reason spans several lines: %q", err)
		}
		t.Skip("no CUDA device: " + err.Error())
	}
	if !strings.Contains(name, "cuda:0") || !strings.Contains(name, "sm_") {
		t.Errorf("Available = %q, want a device description", name)
	}
	t.Log(name)
}

// TestDeviceInfo logs the device, the libraries and how long New takes
// with and without compiled kernels on disk.
func TestDeviceInfo(t *testing.T) {
	openTest(t, Options{}) // skips without a device
	t0 := time.Now()
	cold, err := New(Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	coldTime := time.Since(t0)
	cold.Close()
	t0 = time.Now()
	warm := openTest(t, Options{})
	warmTime := time.Since(t0)
	target, cached := warm.Target()
	t.Logf("%s; kernels %s; NVRTC %s; cuBLAS %d; New %v compiling, %v from cache (%d files)",
		warm.Name(), target, warm.rtc.Library(), warm.blas.version(), coldTime, warmTime, cached)
	if p := warm.Peak(); p.BandwidthGBs < 100 {
		t.Errorf("peak %+v: want the memory's bandwidth from the attributes (hundreds of GB/s at least)", p)
	} else {
		t.Logf("peak: %.0f GB/s, %.0f dense 16-bit tensor TFLOP/s", p.BandwidthGBs, p.TensorTFLOPS)
	}
}

// TestPhiloxMatchesRNG compares the device Philox with package rng.
func TestPhiloxMatchesRNG(t *testing.T) {
	b := openTest(t, Options{})
	r := rand.New(rand.NewPCG(1, 2))
	const n = 4096
	ctr := make([]int32, 4*n)
	for i := range ctr {
		ctr[i] = int32(r.Uint32())
	}
	seed := r.Uint64()
	in := upload(t, b, ctr)
	out := alloc(t, b, backend.I32, 4*n)
	c := b.begin("philox test")
	c.args().ptr(in.(*buffer).ptr).i32(n).u32(uint32(seed)).u32(uint32(seed >> 32)).ptr(out.(*buffer).ptr)
	c.launch("philox_words", d1(c.blocks(n, 256)), d1(256), 0)
	c.end()
	got := readI32(t, b, out, 4*n)
	for i := range n {
		var cv [4]uint32
		for k := range 4 {
			cv[k] = uint32(ctr[4*i+k])
		}
		want := rng.Philox(cv, [2]uint32{uint32(seed), uint32(seed >> 32)})
		for k := range 4 {
			if uint32(got[4*i+k]) != want[k] {
				t.Fatalf("counter %v: word %d = %#x, want %#x", cv, k, uint32(got[4*i+k]), want[k])
			}
		}
	}
}

// TestMissingCublasIsOneLine: when cuBLAS cannot be loaded, loadCublas's
// error (which Available and New report) is one line naming cuBLAS and the
// directory it was given. The sonames are swapped for ones that exist
// nowhere, so the check runs on a host with cuBLAS too (it would otherwise
// find the library on the loader path, past the given directory); the
// given directory holds a file by that name that is no library, so the
// loader's own message is part of the error.
func TestMissingCublasIsOneLine(t *testing.T) {
	dir := t.TempDir()
	const absent = "libcublas-fanout-absent.so.99"
	if err := os.WriteFile(filepath.Join(dir, absent), []byte("not a shared object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := cublasSonames
	cublasSonames = []string{absent}
	t.Cleanup(func() { cublasSonames = saved })
	_, err := loadCublas(dir)
	if err == nil {
		t.Fatalf("loadCublas loaded %s", absent)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "cuBLAS") || !strings.Contains(msg, dir) || !strings.Contains(msg, absent) {
		t.Errorf("error %q: want one line naming cuBLAS, %s and %s", msg, absent, dir)
	}
	t.Log(msg)
}

func TestPoolStats(t *testing.T) {
	b := openTest(t, Options{})
	base, res0 := b.InUseBytes(), b.ReservedBytes()
	x := alloc(t, b, backend.F32, 1<<20)
	if got := b.InUseBytes() - base; got != 4<<20 {
		t.Errorf("in use grew by %d, want %d", got, 4<<20)
	}
	res1 := b.ReservedBytes()
	if res1-res0 < 4<<20 {
		t.Errorf("reserved grew by %d for a 4 MiB buffer", res1-res0)
	}
	b.Free(x)
	if got := b.InUseBytes(); got != base {
		t.Errorf("in use %d after Free, want %d", got, base)
	}
	y := alloc(t, b, backend.F32, 1<<20-7) // same size class: reused
	if got := b.ReservedBytes(); got != res1 {
		t.Errorf("reserved %d after re-allocating a freed size, want %d (reuse)", got, res1)
	}
	if got := readF32(t, b, y, 1<<20-7); got[0] != 0 || got[len(got)-1] != 0 {
		t.Errorf("re-used block not zeroed")
	}
	if b.PeakBytes() < base+4<<20 {
		t.Errorf("peak %d below %d", b.PeakBytes(), base+4<<20)
	}
	for _, n := range []int64{1, 511, 512, 513, 1000, 1 << 20, 1<<20 + 1, 300 << 20} {
		if c := sizeClass(n); c < n || float64(c) > 1.26*float64(max(n, 512)) {
			t.Errorf("sizeClass(%d) = %d", n, c)
		}
	}
}

func TestOutOfMemory(t *testing.T) {
	b := openTest(t, Options{})
	_, err := b.Alloc(backend.U8, 1<<46)
	if err == nil {
		t.Fatal("Alloc of 64 TiB succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"out of memory", "64.0 TiB", "in use", "free of"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	t.Log(msg)
	x := alloc(t, b, backend.F32, 10)
	b.Fill(x, 2)
	if got := readF32(t, b, x, 10); got[9] != 2 {
		t.Errorf("backend unusable after an out-of-memory error")
	}
}

// TestKernelErrors: errors found on the device reach Sync.
func TestKernelErrors(t *testing.T) {
	b := openTest(t, Options{})
	table := upload(t, b, make([]float32, 4*5))
	out := alloc(t, b, backend.F32, 4*3)
	b.Gather(table, 4, upload(t, b, []int32{0, 7, 1}), countBuf(t, b, 3, 3), out)
	err := b.Sync()
	if err == nil || !strings.Contains(err.Error(), "Gather") || !strings.Contains(err.Error(), "= 7") {
		t.Errorf("Gather with id 7 of 5 rows: Sync returned %v", err)
	}
}

// TestCapture records launches into a CUDA graph and replays them.
func TestCapture(t *testing.T) {
	b := openTest(t, Options{})
	cnt := countBuf(t, b, 0, 1)
	table := upload(t, b, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	ids := upload(t, b, []int32{3, 0})
	out := alloc(t, b, backend.F32, 4)
	b.AddCount(cnt, 1, nil) // warm up outside the capture
	must(t, b)
	g := captureGraph(t, b, func() {
		for range 3 {
			b.AddCount(cnt, 2, nil)
		}
		b.Gather(table, 2, ids, countBuf2(b, cnt), out)
	})
	defer g.Close()
	if v := readCount(t, b, cnt); v != 1 {
		t.Fatalf("count %d after capture, want 1 (captured ops must not run)", v)
	}
	for range 5 {
		g.Launch()
	}
	must(t, b)
	if v := readCount(t, b, cnt); v != 31 {
		t.Errorf("count %d after 5 replays, want 31", v)
	}
	if got := readF32(t, b, out, 4); got[0] != 7 || got[1] != 8 || got[2] != 1 || got[3] != 2 {
		t.Errorf("gather in graph: %v", got)
	}
}

// countBuf2 is a Count on an existing buffer with capacity 2 (helper for
// TestCapture, which must not allocate while capturing).
func countBuf2(b *Backend, c backend.Count) backend.Count {
	return backend.Count{Buf: c.Buf, Off: c.Off, Cap: 2}
}

// TestLinearBackwardWeightKeepsInputs: the padding rows that the GEMM zeroes
// are restored, also when x and dy are the same buffer.
func TestLinearBackwardWeightKeepsInputs(t *testing.T) {
	b := openTest(t, Options{CapacityGemm: true})
	r := rand.New(rand.NewPCG(3, 4))
	const cp, live, in, out = 50, 31, 12, 7
	xs, dys := randF32(r, cp*in), randF32(r, cp*out)
	x, dy := upload(t, b, xs), upload(t, b, dys)
	dw := alloc(t, b, backend.F32, in*out)
	b.LinearBackwardWeight(x, dy, countBuf(t, b, live, cp), in, out, dw, false)
	want := make([]float64, in*out)
	for rr := range live {
		for i := range in {
			for j := range out {
				want[i*out+j] += float64(xs[rr*in+i]) * float64(dys[rr*out+j])
			}
		}
	}
	if e := relErr(readF32(t, b, dw, in*out), want); !(e <= 1e-5) {
		t.Errorf("dw relative error %g", e)
	}
	for name, p := range map[string]struct {
		buf  backend.Buffer
		host []float32
	}{"x": {x, xs}, "dy": {dy, dys}} {
		got := readF32(t, b, p.buf, len(p.host))
		for i := range got {
			if got[i] != p.host[i] {
				t.Fatalf("%s[%d] changed: %g, was %g", name, i, got[i], p.host[i])
			}
		}
	}
	// x and dy overlapping: the same buffer as [cp, 12] and [cp, 12].
	b.LinearBackwardWeight(x, x, countBuf(t, b, live, cp), in, in, alloc(t, b, backend.F32, in*in), false)
	got := readF32(t, b, x, len(xs))
	for i := range got {
		if got[i] != xs[i] {
			t.Fatalf("aliased x[%d] changed: %g, was %g", i, got[i], xs[i])
		}
	}
}

// TestTF32 shows the accuracy effect of TF32 tensor-op math on a GEMM.
func TestTF32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const m, n, k = 256, 192, 512
	as, bs := randF32(r, m*k), randF32(r, k*n)
	want := make([]float64, m*n)
	for i := range m {
		for l := range k {
			a := float64(as[i*k+l])
			for j := range n {
				want[i*n+j] += a * float64(bs[l*n+j])
			}
		}
	}
	errs := map[bool]float64{}
	for _, tf32 := range []bool{false, true} {
		b := openTest(t, Options{TF32: tf32})
		c := alloc(t, b, backend.F32, m*n)
		b.Linear(upload(t, b, as), countBuf(t, b, m, m), upload(t, b, bs), k, n, c, false)
		errs[tf32] = relErr(readF32(t, b, c, m*n), want)
	}
	t.Logf("GEMM %dx%dx%d relative error: float32 %.2e, TF32 %.2e", m, n, k, errs[false], errs[true])
	if !(errs[false] <= 1e-5) {
		t.Errorf("float32 GEMM error %g", errs[false])
	}
	if !(errs[true] <= 5e-3) {
		t.Errorf("TF32 GEMM error %g", errs[true])
	}
}

// TestStats: launches and host syncs are counted.
func TestStats(t *testing.T) {
	b := openTest(t, Options{})
	cnt := countBuf(t, b, 0, 1)
	b.ResetStats()
	for range 4 {
		b.AddCount(cnt, 1, nil)
	}
	if v := readCount(t, b, cnt); v != 4 {
		t.Errorf("count %d", v)
	}
	s := b.Stats()
	if s.Launches != 4 || s.HostSyncs < 1 {
		t.Errorf("stats %+v: want 4 launches and at least one host sync", s)
	}
}

// TestLinearKeepsPaddingRows: Linear and LinearBackwardData compute the live
// rows, reading the count back or multiplying the capacity; when they
// accumulate they leave the output's rows past the live count as they were
// (the output may be a view whose later rows belong to the caller), and
// either way they leave the rows past the view's capacity alone.
func TestLinearKeepsPaddingRows(t *testing.T) {
	const cp, live, in, out = 40, 23, 9, 6
	r := rand.New(rand.NewPCG(17, 18))
	xs, ws, prev := randF32(r, cp*in), randF32(r, in*out), randF32(r, (cp+5)*max(in, out))
	for _, exact := range []bool{false, true} {
		b := openTest(t, Options{CapacityGemm: !exact})
		for _, acc := range []bool{false, true} {
			for _, op := range []string{"Linear", "LinearBackwardData"} {
				name := fmt.Sprintf("%s exact=%t accumulate=%t", op, exact, acc)
				cols, k, a := out, in, xs
				if op == "LinearBackwardData" {
					cols, k, a = in, out, xs[:cp*out]
				}
				parent := upload(t, b, prev[:(cp+5)*cols])
				y := b.View(parent, 0, cp*cols)
				n := countBuf(t, b, live, cp)
				if op == "Linear" {
					b.Linear(upload(t, b, a), n, upload(t, b, ws), in, out, y, acc)
				} else {
					b.LinearBackwardData(upload(t, b, a), n, upload(t, b, ws), in, out, y, acc)
				}
				got := readF32(t, b, parent, (cp+5)*cols)
				for i := 0; i < cp+5; i++ {
					for j := range cols {
						var want float64
						if i >= live && i < cp && !acc {
							continue // unspecified
						}
						if i >= live {
							want = float64(prev[i*cols+j])
						} else {
							for l := range k {
								wv := ws[l*out+j] // Linear: w[l, j]
								if op == "LinearBackwardData" {
									wv = ws[j*out+l] // w[j, l] for dx = dy·wᵀ
								}
								want += float64(a[i*k+l]) * float64(wv)
							}
							if acc {
								want += float64(prev[i*cols+j])
							}
						}
						if g := float64(got[i*cols+j]); !(math.Abs(g-want) <= 1e-5*(1+math.Abs(want))) {
							t.Fatalf("%s: row %d col %d = %g, want %g", name, i, j, g, want)
						}
					}
				}
			}
		}
	}
}

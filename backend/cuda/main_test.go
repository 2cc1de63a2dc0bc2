package cuda

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// testCacheDir holds the kernels compiled for this test binary's run.
var testCacheDir string

// keeper holds the primary context open between tests (so that each test's
// backend does not create it anew); keepErr says why there is no device.
var (
	keepOnce sync.Once
	keeper   *Backend
	keepErr  error
)

var cacheFlag = flag.String("cuda.cache", "", "kernel cache directory for GPU tests (default: a fresh temporary directory)")

func TestMain(m *testing.M) {
	flag.Parse()
	testCacheDir = *cacheFlag
	if testCacheDir == "" {
		dir, err := os.MkdirTemp("", "fanout-cuda-kernels-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		testCacheDir = dir
	}
	code := m.Run()
	if keeper != nil {
		keeper.Close()
	}
	if *cacheFlag == "" {
		os.RemoveAll(testCacheDir)
	}
	os.Exit(code)
}

// openTest returns a fresh backend closed at the end of the test, or skips
// the test when there is no usable device.
func openTest(t testing.TB, opt Options) *Backend {
	t.Helper()
	keepOnce.Do(func() { keeper, keepErr = New(Options{CacheDir: testCacheDir}) })
	if keepErr != nil {
		// Skip only without a device; a device whose backend fails to open
		// (a kernel that does not compile or load) fails the test.
		if _, err := Available(Options{}); err != nil {
			t.Skip("no CUDA device: " + err.Error())
		}
		t.Fatalf("New: %v", keepErr)
	}
	opt.CacheDir = testCacheDir
	b, err := New(opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// must fails the test on a sticky error.
func must(t testing.TB, b backend.Backend) {
	t.Helper()
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func upload(t testing.TB, b backend.Backend, data any) backend.Buffer {
	t.Helper()
	x, err := b.Upload(data)
	if err != nil {
		t.Fatalf("Upload(%T): %v", data, err)
	}
	return x
}

func alloc(t testing.TB, b backend.Backend, dt backend.DType, n int) backend.Buffer {
	t.Helper()
	x, err := b.Alloc(dt, n)
	if err != nil {
		t.Fatalf("Alloc(%s, %d): %v", dt, n, err)
	}
	return x
}

// countBuf returns a Count with the given live value and capacity.
func countBuf(t testing.TB, b backend.Backend, live, cap int) backend.Count {
	return backend.Count{Buf: upload(t, b, []int32{int32(live)}), Cap: cap}
}

// captureGraph records the ops issue issues on c into a replayable graph,
// failing the test when the capture does; the caller closes the graph.
func captureGraph(t testing.TB, c backend.Capturer, issue func()) backend.Replay {
	t.Helper()
	if err := c.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	issue()
	g, err := c.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// readBack copies the first n elements of x to the host and syncs.
func readBack[T any](t testing.TB, b backend.Backend, x backend.Buffer, n int) []T {
	t.Helper()
	out := make([]T, n)
	b.Read(out, x, 0)
	must(t, b)
	return out
}

func readI32(t testing.TB, b backend.Backend, x backend.Buffer, n int) []int32 {
	t.Helper()
	return readBack[int32](t, b, x, n)
}

func readF32(t testing.TB, b backend.Backend, x backend.Buffer, n int) []float32 {
	t.Helper()
	return readBack[float32](t, b, x, n)
}

func readCount(t testing.TB, b backend.Backend, c backend.Count) int {
	t.Helper()
	v := make([]int32, 1)
	b.Read(v, c.Buf, c.Off)
	must(t, b)
	return int(v[0])
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(2*r.Float64() - 1)
	}
	return s
}

// relErr is ‖got − want‖ / ‖want‖ over the first len(want) values; NaN in
// got gives +Inf.
func relErr(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		g := float64(got[i])
		if math.IsNaN(g) {
			return math.Inf(1)
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

func equalI32(t testing.TB, what string, got, want []int32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: [%d] = %d, want %d (of %d)", what, i, got[i], want[i], len(want))
		}
	}
}

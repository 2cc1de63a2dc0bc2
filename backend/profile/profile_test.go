package profile_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/backendtest"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/profile"
)

// clockBackend is the CPU backend with a fake device clock: every Mark
// advances the clock by 1 µs and stamps it, and Linear and Gather advance
// it by linearCost and gatherCost, so the time between an op's marks is
// its cost plus 1 µs.
type clockBackend struct {
	*cpu.Backend
	mu       sync.Mutex
	now      time.Duration
	open     int // marks not yet closed
	sinces   int // Since calls
	failMark bool
}

const (
	linearCost = 50 * time.Microsecond
	gatherCost = 7 * time.Microsecond
)

type fakeMark struct {
	b *clockBackend
	t time.Duration
}

func (b *clockBackend) Mark() (backend.Mark, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failMark {
		return nil, errors.New("no more events")
	}
	b.now += time.Microsecond
	b.open++
	return &fakeMark{b: b, t: b.now}, nil
}

func (m *fakeMark) Since(earlier backend.Mark) (time.Duration, error) {
	m.b.mu.Lock()
	defer m.b.mu.Unlock()
	m.b.sinces++
	return m.t - earlier.(*fakeMark).t, nil
}

func (m *fakeMark) Close() {
	m.b.mu.Lock()
	defer m.b.mu.Unlock()
	m.b.open--
}

func (b *clockBackend) advance(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now += d
}

func (b *clockBackend) Linear(x backend.Buffer, n backend.Count, w backend.Buffer, in, out int, y backend.Buffer, accumulate bool) {
	b.Backend.Linear(x, n, w, in, out, y, accumulate)
	b.advance(linearCost)
}

func (b *clockBackend) Gather(table backend.Buffer, dim int, ids backend.Buffer, n backend.Count, out backend.Buffer) {
	b.Backend.Gather(table, dim, ids, n, out)
	b.advance(gatherCost)
}

func (b *clockBackend) state() (open, sinces int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open, b.sinces
}

// TestConformance runs the whole suite through the wrapper (its Capture
// subtest skips: the wrapper does not capture).
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return profiled(t, &clockBackend{Backend: cpu.New(2)})
	})
}

// profiled wraps fake in the profiler, closed when the test ends.
func profiled(t *testing.T, fake *clockBackend) *profile.Backend {
	b := profile.New(fake)
	t.Cleanup(func() { b.Close() })
	return b
}

// issue runs a small sequence: 3 Linear, 2 Gather, 1 Fill.
func issue(t *testing.T, b *profile.Backend) backend.Buffer {
	t.Helper()
	x, _ := b.Upload([]float32{1, 2, 3, 4})
	w, _ := b.Upload([]float32{1, 0, 0, 1})
	y, _ := b.Alloc(backend.F32, 4)
	cnt, _ := b.Upload([]int32{2})
	n := backend.Count{Buf: cnt, Cap: 2}
	ids, _ := b.Upload([]int32{1, 0})
	for range 3 {
		b.Linear(x, n, w, 2, 2, y, false)
	}
	for range 2 {
		b.Gather(x, 2, ids, n, y)
	}
	b.Fill(y, 0)
	return y
}

func TestReportTimesOpsLazily(t *testing.T) {
	fake := &clockBackend{Backend: cpu.New(1)}
	b := profiled(t, fake)
	if !b.Timed() {
		t.Fatal("Timed is false for a backend with a Timer")
	}
	issue(t, b)
	if _, sinces := fake.state(); sinces != 0 {
		t.Errorf("%d marks read before any Sync: settling must wait for a Sync", sinces)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if open, sinces := fake.state(); open != 0 || sinces != 6 {
		t.Errorf("after Sync: %d marks open, %d read; want 0 and 6", open, sinces)
	}
	got := b.Report()
	want := []profile.OpTime{
		{Name: "Linear", Calls: 3, Time: 3 * (linearCost + time.Microsecond)},
		{Name: "Gather", Calls: 2, Time: 2 * (gatherCost + time.Microsecond)},
		{Name: "Fill", Calls: 1, Time: time.Microsecond},
	}
	if len(got) != len(want) {
		t.Fatalf("Report = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Report[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if err := b.Err(); err != nil {
		t.Errorf("Err = %v", err)
	}
}

func TestResetAndReadSettle(t *testing.T) {
	fake := &clockBackend{Backend: cpu.New(1)}
	b := profiled(t, fake)
	issue(t, b)
	b.Reset()
	if r := b.Report(); len(r) != 0 {
		t.Errorf("Report after Reset = %+v, want empty", r)
	}
	y := issue(t, b)
	b.Read(make([]float32, 4), y, 0)
	if open, _ := fake.state(); open != 0 {
		t.Errorf("%d marks open after Read, want 0 (Read settles)", open)
	}
	if r := b.Report(); len(r) != 3 || r[0].Name != "Linear" || r[0].Calls != 3 {
		t.Errorf("Report after Reset and a second sequence = %+v", r)
	}
}

// TestReportWithoutSync: Report settles marks itself.
func TestReportWithoutSync(t *testing.T) {
	fake := &clockBackend{Backend: cpu.New(1)}
	b := profiled(t, fake)
	issue(t, b)
	r := b.Report()
	if len(r) == 0 || r[0].Time != 3*(linearCost+time.Microsecond) {
		t.Errorf("Report without Sync = %+v", r)
	}
}

// TestWithoutTimer: calls are counted, times stay zero, Mark is an error.
// untimed is a backend without backend.Timer: the interface alone, which
// hides the CPU backend's Mark.
type untimed struct{ backend.Backend }

func TestWithoutTimer(t *testing.T) {
	inner := cpu.New(1)
	defer inner.Close()
	b := profile.New(untimed{inner})
	if b.Timed() {
		t.Error("Timed is true for a backend without Mark")
	}
	issue(t, b)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	r := b.Report()
	if len(r) != 3 {
		t.Fatalf("Report = %+v", r)
	}
	for _, o := range r {
		if o.Time != 0 {
			t.Errorf("%s: time %v without a timer", o.Name, o.Time)
		}
	}
	// Equal times: most calls first.
	if r[0].Name != "Linear" || r[1].Name != "Gather" || r[2].Name != "Fill" {
		t.Errorf("order %v, want Linear, Gather, Fill", r)
	}
	if _, err := b.Mark(); err == nil {
		t.Error("Mark without a timer succeeded")
	}
}

// TestCPUTimed: the CPU backend times its ops with the host's clock (its
// ops run synchronously): a product of a few milliseconds is reported with
// a time above zero and within the wall time around it.
func TestCPUTimed(t *testing.T) {
	b := profile.New(cpu.New(1))
	defer b.Close()
	if !b.Timed() {
		t.Fatal("Timed is false for the CPU backend")
	}
	const rows, dim = 512, 256
	x, _ := b.Alloc(backend.F32, rows*dim)
	w, _ := b.Alloc(backend.F32, dim*dim)
	y, _ := b.Alloc(backend.F32, rows*dim)
	cnt, _ := b.Upload([]int32{rows})
	start := time.Now()
	b.Linear(x, backend.Count{Buf: cnt, Cap: rows}, w, dim, dim, y, false)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	r := b.Report()
	if len(r) != 1 || r[0].Name != "Linear" || r[0].Calls != 1 {
		t.Fatalf("Report = %+v", r)
	}
	if d := r[0].Time; d <= 0 || d > wall {
		t.Errorf("Linear: %v on the CPU backend's clock, %v of wall time around it", d, wall)
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestMarkFailure: a failing Mark stops timing, is reported by Err, and
// ops are still forwarded.
func TestMarkFailure(t *testing.T) {
	fake := &clockBackend{Backend: cpu.New(1), failMark: true}
	b := profiled(t, fake)
	y := issue(t, b)
	got := make([]float32, 4)
	b.Read(got, y, 0)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if got[0] != 0 || got[3] != 0 {
		t.Errorf("Fill was not forwarded: %v", got)
	}
	if err := b.Err(); err == nil || !strings.Contains(err.Error(), "no more events") {
		t.Errorf("Err = %v, want the Mark failure", err)
	}
	if r := b.Report(); len(r) != 3 || r[0].Calls+r[1].Calls+r[2].Calls != 6 {
		t.Errorf("Report = %+v, want 6 counted calls", r)
	}
}

func TestNameAndForwarding(t *testing.T) {
	inner := cpu.New(1)
	b := profile.New(inner)
	if b.Inner() != inner || !strings.HasPrefix(b.Name(), inner.Name()) {
		t.Errorf("Inner/Name do not describe the wrapped backend: %q", b.Name())
	}
	if _, ok := any(b).(backend.Capturer); ok {
		t.Error("the profile wrapper must not offer capture")
	}
	if _, err := b.Alloc(backend.F32, 100); err != nil {
		t.Fatal(err)
	}
	if b.InUseBytes() != inner.InUseBytes() || b.PeakBytes() != inner.PeakBytes() {
		t.Errorf("memory stats %d/%d, inner %d/%d", b.InUseBytes(), b.PeakBytes(), inner.InUseBytes(), inner.PeakBytes())
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

package record_test

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/backendtest"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/graph"
)

func newRecord(t *testing.T) *record.Backend {
	b := record.New(cpu.New(2))
	t.Cleanup(func() { b.Close() })
	return b
}

// TestConformance runs the whole suite through the wrapper, its Capture
// subtest included.
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return newRecord(t) })
}

// TestCaptureRules: each call that the capture forbids fails (or records
// an error), EndCapture reports it and drops the recording, and every
// later Sync returns it.
func TestCaptureRules(t *testing.T) {
	csr := &graph.CSR{NumNodes: 1, Indptr: []int64{0, 0}}
	cases := map[string]func(b *record.Backend, buf backend.Buffer) error{
		"Alloc":       func(b *record.Backend, _ backend.Buffer) error { _, err := b.Alloc(backend.F32, 4); return err },
		"Upload":      func(b *record.Backend, _ backend.Buffer) error { _, err := b.Upload([]int32{1}); return err },
		"UploadGraph": func(b *record.Backend, _ backend.Buffer) error { _, err := b.UploadGraph(csr); return err },
		"Write":       func(b *record.Backend, buf backend.Buffer) error { b.Write(buf, 0, []float32{5}); return nil },
		"Read":        func(b *record.Backend, buf backend.Buffer) error { b.Read(make([]float32, 1), buf, 0); return nil },
		"Free":        func(b *record.Backend, buf backend.Buffer) error { b.Free(buf); return nil },
		"Sync":        func(b *record.Backend, _ backend.Buffer) error { return b.Sync() },
	}
	for op, call := range cases {
		t.Run(op, func(t *testing.T) {
			b := newRecord(t)
			buf, err := b.Alloc(backend.F32, 4)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.BeginCapture(); err != nil {
				t.Fatalf("BeginCapture: %v", err)
			}
			b.Fill(buf, 2)
			direct := call(b, buf)
			if direct != nil && !strings.Contains(direct.Error(), op) {
				t.Errorf("%s during capture returned %v, want an error naming %s", op, direct, op)
			}
			if (op == "Alloc" || op == "Upload" || op == "UploadGraph" || op == "Sync") && direct == nil {
				t.Errorf("%s during capture returned no error", op)
			}
			rp, err := b.EndCapture()
			if err == nil || !strings.Contains(err.Error(), op) || rp != nil {
				t.Errorf("EndCapture after %s: (%v, %v), want no replay and an error naming %s", op, rp, err, op)
			}
			for range 2 {
				if err := b.Sync(); err == nil || !strings.Contains(err.Error(), op) {
					t.Errorf("Sync after the capture returned %v, want the sticky %s error", err, op)
				}
			}
			got := make([]float32, 4)
			b.Read(got, buf, 0)
			if got[0] != 0 {
				t.Errorf("buffer holds %v: a forbidden call or the recorded Fill ran", got)
			}
			if err := b.BeginCapture(); err == nil {
				t.Errorf("BeginCapture after a sticky error succeeded")
			}
		})
	}
}

// TestCaptureMisuse: nested BeginCapture, EndCapture without a capture and
// Launch after Close are errors; Close is idempotent.
func TestCaptureMisuse(t *testing.T) {
	b := newRecord(t)
	if _, err := b.EndCapture(); err == nil {
		t.Error("EndCapture without BeginCapture succeeded")
	}
	buf, _ := b.Alloc(backend.I32, 1)
	if err := b.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := b.BeginCapture(); err == nil {
		t.Error("nested BeginCapture succeeded")
	}
	b.AddCount(backend.Count{Buf: buf, Cap: 1}, 3, nil)
	rp, err := b.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	rp.Launch()
	rp.Launch()
	got := make([]int32, 1)
	b.Read(got, buf, 0)
	if err := b.Sync(); err != nil || got[0] != 6 {
		t.Fatalf("two launches of AddCount(3): value %d, Sync %v; want 6, nil", got[0], err)
	}
	if err := rp.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := rp.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	rp.Launch()
	if err := b.Sync(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Sync after Launch of a closed replay returned %v, want an error", err)
	}
	b.Read(got, buf, 0)
	if got[0] != 6 {
		t.Errorf("Launch after Close ran the ops: value %d", got[0])
	}
}

// TestNestedLaunch: a launch issued inside a capture is recorded, not run.
func TestNestedLaunch(t *testing.T) {
	b := newRecord(t)
	buf, _ := b.Alloc(backend.I32, 1)
	c := backend.Count{Buf: buf, Cap: 1}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.BeginCapture())
	b.AddCount(c, 1, nil)
	inner, err := b.EndCapture()
	must(err)
	must(b.BeginCapture())
	inner.Launch()
	b.AddCount(c, 10, nil)
	inner.Launch()
	outer, err := b.EndCapture()
	must(err)
	got := make([]int32, 1)
	b.Read(got, buf, 0)
	if got[0] != 0 {
		t.Fatalf("capture ran ops: value %d", got[0])
	}
	outer.Launch()
	b.Read(got, buf, 0)
	must(b.Sync())
	if got[0] != 12 {
		t.Errorf("outer launch: value %d, want 12", got[0])
	}
}

// TestForwarding: memory statistics and Close reach the inner backend.
func TestForwarding(t *testing.T) {
	inner := cpu.New(1)
	b := record.New(inner)
	if b.Inner() != inner || !strings.HasPrefix(b.Name(), inner.Name()) {
		t.Errorf("Inner/Name do not describe the wrapped backend: %q", b.Name())
	}
	if _, err := b.Alloc(backend.F32, 100); err != nil {
		t.Fatal(err)
	}
	cnt, err := b.Alloc(backend.I32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b.InUseBytes() != inner.InUseBytes() || b.InUseBytes() < 400 || b.PeakBytes() != inner.PeakBytes() {
		t.Errorf("InUseBytes %d / PeakBytes %d, inner %d / %d", b.InUseBytes(), b.PeakBytes(), inner.InUseBytes(), inner.PeakBytes())
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	b.AddCount(backend.Count{Buf: cnt, Cap: 1}, 1, nil)
	if err := b.Sync(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("an op after Close: Sync returned %v, want the inner backend's closed error", err)
	}
}

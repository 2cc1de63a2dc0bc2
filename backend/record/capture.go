package record

import (
	"errors"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
)

// BeginCapture starts recording op calls. It fails when a capture is in
// progress or a sticky error is recorded.
func (b *Backend) BeginCapture() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.capturing {
		return errors.New("record: BeginCapture: already capturing")
	}
	if b.err != nil {
		return b.err
	}
	b.capturing, b.ops = true, nil
	return nil
}

// EndCapture stops recording and returns the recorded calls as a Replay.
// When a call broke the capture rules, the recording is dropped and the
// sticky error returned.
func (b *Backend) EndCapture() (backend.Replay, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.capturing {
		return nil, errors.New("record: EndCapture: not capturing")
	}
	ops := b.ops
	b.capturing, b.ops = false, nil
	if b.err != nil {
		return nil, b.err
	}
	return &Replay{b: b, ops: ops}, nil
}

// Replay is a recorded sequence of op calls.
type Replay struct {
	b      *Backend
	mu     sync.Mutex
	ops    []func()
	closed bool
}

// Len is the number of recorded op calls.
func (r *Replay) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// Launch runs the recorded calls in order (or, during another capture,
// records one launch). After Close it records a sticky error instead.
func (r *Replay) Launch() {
	r.mu.Lock()
	ops, closed := r.ops, r.closed
	r.mu.Unlock()
	if closed {
		r.b.mu.Lock()
		r.b.fail(errors.New("record: Launch: replay is closed"))
		r.b.mu.Unlock()
		return
	}
	r.b.do(func() {
		for _, op := range ops {
			op()
		}
	})
}

// Close releases the recorded calls; closing twice is harmless.
func (r *Replay) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed, r.ops = true, nil
	return nil
}

package cpu

import (
	"fmt"
	"time"

	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.Timer = (*Backend)(nil)

// Mark is the host's monotonic clock now (backend.Timer): ops run
// synchronously, so the work issued so far is done when Mark returns, and
// the time between two marks is the work between them.
func (b *Backend) Mark() (backend.Mark, error) { return wallMark{time.Now()}, nil }

// wallMark is a Mark of the CPU backend.
type wallMark struct{ at time.Time }

// Since is the time from earlier, a mark of a CPU backend, to m.
func (m wallMark) Since(earlier backend.Mark) (time.Duration, error) {
	e, ok := earlier.(wallMark)
	if !ok {
		return 0, fmt.Errorf("cpu: Mark.Since: %T is not a CPU backend's mark", earlier)
	}
	return m.at.Sub(e.at), nil
}

func (wallMark) Close() {}

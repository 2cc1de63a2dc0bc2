package traintest

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/backend/record"
)

// CPUGroup is n CPU backends of one thread each, joined in process; each
// is under the record wrapper where recorded (the capturing modes need it).
func CPUGroup(t testing.TB, n int, recorded bool) ([]backend.Backend, []*inproc.Comm) {
	t.Helper()
	bes := make([]backend.Backend, n)
	for i := range bes {
		bes[i] = cpu.New(1)
		if recorded {
			bes[i] = record.New(bes[i])
		}
	}
	comms, err := inproc.New(bes)
	if err != nil {
		t.Fatal(err)
	}
	return bes, comms
}

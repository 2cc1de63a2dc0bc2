package job

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// namedDevice stands in for a device with a given name.
type namedDevice struct {
	*cpu.Backend
	name string
}

func (d namedDevice) Name() string { return d.name }

// A group's devices are named by their own ordinals, not the first
// device's repeated ("2 x cuda:0 ..." named two GPUs before).
func TestGroupName(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	group := func(names ...string) []backend.Backend {
		bes := make([]backend.Backend, len(names))
		for i, n := range names {
			bes[i] = namedDevice{be, n}
		}
		return bes
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"cuda:0 NVIDIA H200 (sm_90)"}, "cuda:0 NVIDIA H200 (sm_90)"},
		{[]string{"cuda:0 NVIDIA H200 (sm_90)", "cuda:1 NVIDIA H200 (sm_90)"}, "cuda:0,1: 2 x NVIDIA H200 (sm_90)"},
		{[]string{"cuda:2 A (x)", "cuda:0 A (x)", "cuda:3 A (x)"}, "cuda:2,0,3: 3 x A (x)"},
		{[]string{"cuda:0 A (x)", "cuda:1 B (x)"}, "cuda:0 A (x); cuda:1 B (x)"},
		{[]string{"cpu (2 threads)", "cpu (2 threads)"}, "2 x cpu (2 threads)"},
		{[]string{"cpu (1 thread)", "cpu (2 threads)"}, "cpu (1 thread); cpu (2 threads)"},
	} {
		if got := groupName(group(c.names...)); got != c.want {
			t.Errorf("groupName(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

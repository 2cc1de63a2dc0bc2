package nn

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// coreOnly is a backend with the required core and no capability: the
// CPU backend seen through backend.Backend alone.
type coreOnly struct{ backend.Backend }

// TestGATNeedsAttention: a GAT model on a backend without attention ops
// fails when it is built, naming the backend and the capability; the
// other models build on it.
func TestGATNeedsAttention(t *testing.T) {
	be := coreOnly{newCPU(t)}
	_, err := NewModel(be, hotConfig(KindGAT), 1)
	if err == nil {
		t.Fatal("a GAT model was built on a backend without attention ops")
	}
	for _, want := range []string{be.Name(), "backend.Attention", KindGAT} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	for _, kind := range []string{KindSAGE, KindGCN, KindGIN} {
		m, err := NewModel(be, hotConfig(kind), 1)
		if err != nil {
			t.Fatalf("%s without attention ops: %v", kind, err)
		}
		m.Free()
	}
}

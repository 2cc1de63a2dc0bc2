package profile

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

// TestGeneratedOpsCurrent: ops_gen.go holds what the generator writes from
// the backend interfaces today (a changed op without go generate fails).
func TestGeneratedOpsCurrent(t *testing.T) {
	if err := wrapgen.Stale("..", "profile"); err != nil {
		t.Fatal(err)
	}
}

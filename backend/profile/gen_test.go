package profile

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

// TestGenerated: ops_gen.go holds what the generator writes from the op
// descriptions today (a changed op without go generate fails).
func TestGenerated(t *testing.T) { wrapgen.Test(t, "..", "profile") }

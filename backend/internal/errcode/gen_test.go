package errcode

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

// TestGenerated: codes_gen.go holds what the op descriptions
// (backend/ops) generate today.
func TestGenerated(t *testing.T) { wrapgen.Test(t, "../..", "internal/errcode") }

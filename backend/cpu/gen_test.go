package cpu

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

// TestGenerated: the argument checks generated here hold what the op
// descriptions (backend/ops) generate today.
func TestGenerated(t *testing.T) { wrapgen.Test(t, "..", "cpu") }

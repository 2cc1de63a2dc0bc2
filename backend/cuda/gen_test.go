package cuda

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

// TestGenerated: the argument checks and launches generated here, and the
// kernels' header of error codes, hold what the op descriptions
// (backend/ops) generate today, each launch checked against its kernel's
// signature. It needs no GPU.
func TestGenerated(t *testing.T) { wrapgen.Test(t, "..", "cuda", "cuda/kernels") }

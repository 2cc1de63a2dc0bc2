package backend

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

// TestGenerated: the interfaces generated here hold what the op
// descriptions (ops/*.yaml) generate today.
func TestGenerated(t *testing.T) { wrapgen.Test(t, ".", "") }

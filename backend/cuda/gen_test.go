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

// TestKernelArgs: every kernel's parameters fit a launch's argPack
// (maxKernelArgs), which a launch with more would overrun at run time. It
// needs no GPU.
func TestKernelArgs(t *testing.T) {
	ks, err := wrapgen.ReadKernels("kernels")
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) == 0 {
		t.Fatal("no kernels read")
	}
	for _, k := range ks {
		if len(k.Params) > maxKernelArgs {
			t.Errorf("%s (%s): %d parameters, a launch holds %d (maxKernelArgs)", k.Name, k.File, len(k.Params), maxKernelArgs)
		}
	}
}

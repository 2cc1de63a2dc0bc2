package train

import (
	"os"
	"testing"
)

// TestMain removes the GPU tests' shared kernel cache (openCUDAWith) when
// the tests end.
func TestMain(m *testing.M) {
	code := m.Run()
	if kernelCache.dir != "" {
		os.RemoveAll(kernelCache.dir)
	}
	os.Exit(code)
}

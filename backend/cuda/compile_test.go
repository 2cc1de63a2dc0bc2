package cuda

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCompileKernels compiles every embedded kernel file with NVRTC for
// sm_80 and sm_90. It needs NVRTC, not a GPU (CI installs Debian's
// libnvrtc11.2); without NVRTC it skips and says why.
func TestCompileKernels(t *testing.T) {
	rtc, err := LoadNVRTC("")
	if err != nil {
		t.Skip("NVRTC not available: " + err.Error())
	}
	t.Logf("NVRTC %s (%s), architectures %v", rtc.Version(), rtc.Library(), rtc.archs)
	srcs, err := KernelSources()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) < 8 {
		t.Fatalf("only %d kernel files embedded", len(srcs))
	}
	for _, src := range srcs {
		if !strings.Contains(src.Code, `extern "C" __global__`) { // a kernel, or a macro's that declares them
			t.Errorf("%s declares no extern \"C\" __global__ kernel", src.Name)
		}
	}
	for _, arch := range []int{80, 90} {
		for _, src := range srcs {
			t.Run(fmt.Sprintf("sm_%d/%s", arch, src.Name), func(t *testing.T) {
				t.Parallel()
				if !rtc.Supports(arch) {
					t.Skipf("NVRTC %s does not know sm_%d", rtc.Version(), arch)
				}
				img, err := rtc.Compile(src, arch, true, compileOptions)
				if err != nil {
					t.Fatal(err)
				}
				if len(img) == 0 {
					t.Fatal("empty image")
				}
				// Every name the loader will look up is a function of the
				// image (a macro's "extern \"C\"" line would not be).
				for _, k := range kernelNames(src.Code) {
					if !bytes.Contains(img, []byte(".text."+k+"\x00")) {
						t.Errorf("kernel %s is not in the compiled image", k)
					}
				}
			})
		}
	}
}

// TestKernelNames: the scan takes a plain kernel's name, with and without
// launch bounds, and skips a macro's (whose name is pasted).
func TestKernelNames(t *testing.T) {
	code := `extern "C" __global__ void plain(int a) {}
extern "C" __global__ void __launch_bounds__(256, 4) bounded(int a) {}
#define K(P) \
    extern "C" __global__ void __launch_bounds__(256, 4) pasted_##P(int a) {} \
    extern "C" __global__ void pasted2_##P(int a) {}
K(1)`
	got := kernelNames(code)
	if want := []string{"plain", "bounded"}; !slices.Equal(got, want) {
		t.Errorf("kernelNames: %q, want %q", got, want)
	}
}

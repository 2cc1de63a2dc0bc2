package cuda

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// nvrtcSonames are tried in order: newest first.
var nvrtcSonames = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}

// NVRTC is the run-time compiler, loaded from libnvrtc. It needs no GPU.
type NVRTC struct {
	lib          *library
	major, minor int
	archs        []int // supported sm_XY as XY, ascending

	create, destroy, compile, getPTXSize, getPTX, getCUBINSize uintptr
	getCUBIN, logSize, getLog, errString, version              uintptr
	numArchs, getArchs                                         uintptr
}

// LoadNVRTC opens NVRTC from libDir (when set) or the usual places.
func LoadNVRTC(libDir string) (*NVRTC, error) {
	lib, err := openLibrary("NVRTC (libnvrtc)", libDir, nvrtcSonames)
	if err != nil {
		return nil, err
	}
	n := &NVRTC{lib: lib}
	err = lib.symbols(map[string]*uintptr{
		"nvrtcCreateProgram":     &n.create,
		"nvrtcDestroyProgram":    &n.destroy,
		"nvrtcCompileProgram":    &n.compile,
		"nvrtcGetPTXSize":        &n.getPTXSize,
		"nvrtcGetPTX":            &n.getPTX,
		"nvrtcGetProgramLogSize": &n.logSize,
		"nvrtcGetProgramLog":     &n.getLog,
		"nvrtcGetErrorString":    &n.errString,
		"nvrtcVersion":           &n.version,
	})
	if err != nil {
		return nil, err
	}
	// Present from NVRTC 11.1 and 11.2 on.
	n.getCUBINSize, _ = lib.sym("nvrtcGetCUBINSize")
	n.getCUBIN, _ = lib.sym("nvrtcGetCUBIN")
	n.numArchs, _ = lib.sym("nvrtcGetNumSupportedArchs")
	n.getArchs, _ = lib.sym("nvrtcGetSupportedArchs")

	var major, minor int32
	if err := n.call("nvrtcVersion", n.version, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))); err != nil {
		return nil, err
	}
	n.major, n.minor = int(major), int(minor)
	if n.numArchs != 0 && n.getArchs != 0 {
		var cnt int32
		if err := n.call("nvrtcGetNumSupportedArchs", n.numArchs, uintptr(unsafe.Pointer(&cnt))); err != nil {
			return nil, err
		}
		if cnt > 0 && cnt < 1024 {
			archs := make([]int32, cnt)
			if err := n.call("nvrtcGetSupportedArchs", n.getArchs, uintptr(unsafe.Pointer(&archs[0]))); err != nil {
				return nil, err
			}
			for _, a := range archs {
				n.archs = append(n.archs, int(a))
			}
			sort.Ints(n.archs)
		}
	}
	return n, nil
}

// Version is NVRTC's version, e.g. "11.8".
func (n *NVRTC) Version() string { return fmt.Sprintf("%d.%d", n.major, n.minor) }

// Library is the soname that was opened.
func (n *NVRTC) Library() string { return n.lib.name }

// Supports reports whether NVRTC can emit machine code for sm_arch (e.g. 90).
// With no list of architectures (NVRTC before 11.2) it assumes up to sm_80.
func (n *NVRTC) Supports(arch int) bool {
	if len(n.archs) == 0 {
		return arch <= 80
	}
	for _, a := range n.archs {
		if a == arch {
			return true
		}
	}
	return false
}

// target picks what to build for a device of compute capability arch: cubin
// for sm_arch when NVRTC knows it, else PTX for the newest architecture below
// it (the driver compiles that PTX for the device).
func (n *NVRTC) target(arch int) (tarch int, cubin bool) {
	if n.Supports(arch) && n.getCUBIN != 0 {
		return arch, true
	}
	best := 0
	for _, a := range n.archs {
		if a <= arch && a > best {
			best = a
		}
	}
	if best == 0 {
		best = 52
		if arch < best {
			best = arch
		}
	}
	return best, false
}

//go:uintptrescapes
func (n *NVRTC) call(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if code := int32(r); code != 0 {
		s, _, _ := purego.SyscallN(n.errString, uintptr(code))
		return &Error{Call: name, Code: int(code), Name: goString(s)}
	}
	return nil
}

// Source is one translation unit plus the headers it may include by name.
type Source struct {
	Name    string
	Code    string
	Headers map[string]string // include name -> contents
}

// Compile builds src for sm_arch (cubin when cubin is set, PTX for
// compute_arch otherwise) with the extra options opts. A compile error
// returns the compiler log.
func (n *NVRTC) Compile(src Source, arch int, cubin bool, opts []string) ([]byte, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	cstr := func(s string) uintptr {
		b := cString(s)
		pin.Pin(&b[0])
		return uintptr(unsafe.Pointer(&b[0]))
	}
	names := make([]string, 0, len(src.Headers))
	for k := range src.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	hdrs := make([]uintptr, len(names)+1)
	incs := make([]uintptr, len(names)+1)
	for i, k := range names {
		hdrs[i] = cstr(src.Headers[k])
		incs[i] = cstr(k)
	}
	var prog uintptr
	if err := n.call("nvrtcCreateProgram", n.create, uintptr(unsafe.Pointer(&prog)), cstr(src.Code), cstr(src.Name),
		uintptr(len(names)), uintptr(unsafe.Pointer(&hdrs[0])), uintptr(unsafe.Pointer(&incs[0]))); err != nil {
		return nil, err
	}
	defer n.call("nvrtcDestroyProgram", n.destroy, uintptr(unsafe.Pointer(&prog)))

	kind := "compute"
	if cubin {
		kind = "sm"
	}
	all := append([]string{fmt.Sprintf("--gpu-architecture=%s_%d", kind, arch)}, opts...)
	copts := make([]uintptr, len(all))
	for i, o := range all {
		copts[i] = cstr(o)
	}
	if err := n.call("nvrtcCompileProgram", n.compile, prog, uintptr(len(copts)), uintptr(unsafe.Pointer(&copts[0]))); err != nil {
		return nil, fmt.Errorf("compiling %s for %s_%d: %w\n%s", src.Name, kind, arch, err, n.log(prog))
	}
	sizeFn, getFn, what := n.getPTXSize, n.getPTX, "nvrtcGetPTX"
	if cubin {
		sizeFn, getFn, what = n.getCUBINSize, n.getCUBIN, "nvrtcGetCUBIN"
	}
	var size uint64
	if err := n.call(what+"Size", sizeFn, prog, uintptr(unsafe.Pointer(&size))); err != nil {
		return nil, err
	}
	out := make([]byte, size+1)
	if err := n.call(what, getFn, prog, uintptr(unsafe.Pointer(&out[0]))); err != nil {
		return nil, err
	}
	return out[:size], nil
}

// log returns the program's compiler log.
func (n *NVRTC) log(prog uintptr) string {
	var size uint64
	if n.call("nvrtcGetProgramLogSize", n.logSize, prog, uintptr(unsafe.Pointer(&size))) != nil || size == 0 {
		return ""
	}
	b := make([]byte, size+1)
	if n.call("nvrtcGetProgramLog", n.getLog, prog, uintptr(unsafe.Pointer(&b[0]))) != nil {
		return ""
	}
	return strings.TrimRight(string(b[:size]), "\x00\n")
}

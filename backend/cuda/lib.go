package cuda

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// wellKnownDirs are searched after the dynamic loader's own search path, in
// this order, for libraries that CUDA installs outside it.
var wellKnownDirs = []string{
	"/usr/local/cuda/lib64",
	"/usr/local/cuda/targets/x86_64-linux/lib",
	"/usr/local/cuda/targets/sbsa-linux/lib",
	"/usr/local/nvidia/lib64",
	"/usr/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/usr/lib64",
}

// library is an opened shared object.
type library struct {
	name   string // soname that was opened
	path   string // what was passed to dlopen
	handle uintptr
}

// openLibrary opens the first of the sonames that loads, trying libDir first
// (when set), then the loader's search path, then wellKnownDirs. The error
// lists what was tried and the loader's last message.
func openLibrary(what, libDir string, sonames []string) (*library, error) {
	var tries []string
	var lastErr error // the first failure: the plain soname's
	try := func(path, soname string) *library {
		// dlerror's message is per thread: read it on the thread that failed,
		// or it can come back empty.
		runtime.LockOSThread()
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		runtime.UnlockOSThread()
		if err != nil {
			tries = append(tries, path)
			if lastErr == nil {
				lastErr = err
			}
			return nil
		}
		return &library{name: soname, path: path, handle: h}
	}
	if libDir != "" {
		for _, s := range sonames {
			if l := try(filepath.Join(libDir, s), s); l != nil {
				return l, nil
			}
		}
	}
	for _, s := range sonames {
		if l := try(s, s); l != nil {
			return l, nil
		}
	}
	for _, d := range wellKnownDirs {
		for _, s := range sonames {
			if l := try(filepath.Join(d, s), s); l != nil {
				return l, nil
			}
		}
	}
	msg := ""
	if lastErr != nil && strings.TrimSpace(lastErr.Error()) != "" {
		msg = ": " + firstLine(lastErr.Error())
	}
	return nil, fmt.Errorf("%s not found (tried %s%s)%s", what, strings.Join(sonames, ", "),
		dirNote(libDir), msg)
}

func dirNote(libDir string) string {
	if libDir == "" {
		return " on the loader path and in CUDA's usual directories"
	}
	return " in " + libDir + ", on the loader path and in CUDA's usual directories"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// sym looks up a symbol; a missing symbol is an error naming it.
func (l *library) sym(name string) (uintptr, error) {
	p, err := purego.Dlsym(l.handle, name)
	if err != nil || p == 0 {
		return 0, fmt.Errorf("%s: symbol %s not found", l.name, name)
	}
	return p, nil
}

// symbols resolves a table of (name, destination) pairs.
func (l *library) symbols(table map[string]*uintptr) error {
	for name, dst := range table {
		p, err := l.sym(name)
		if err != nil {
			return err
		}
		*dst = p
	}
	return nil
}

// goString copies a NUL-terminated C string.
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	var b []byte
	for i := uintptr(0); i < 1<<16; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(nil), p+i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// cString returns a NUL-terminated copy of s.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

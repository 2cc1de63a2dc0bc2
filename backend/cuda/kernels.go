package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

//go:embed kernels/*.cu kernels/*.cuh
var kernelFS embed.FS

// compileOptions are passed to NVRTC for every kernel file (besides the
// architecture). Plain IEEE float32 arithmetic: no fast-math.
var compileOptions = []string{"-default-device"}

// KernelSources returns every embedded .cu file as a Source whose Headers
// hold all embedded .cuh files, sorted by name.
func KernelSources() ([]Source, error) {
	entries, err := fs.ReadDir(kernelFS, "kernels")
	if err != nil {
		return nil, fmt.Errorf("reading embedded kernels: %w", err)
	}
	headers := map[string]string{}
	var units []string
	for _, e := range entries {
		b, err := kernelFS.ReadFile(path.Join("kernels", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading embedded kernel %s: %w", e.Name(), err)
		}
		switch {
		case strings.HasSuffix(e.Name(), ".cuh"):
			headers[e.Name()] = string(b)
		case strings.HasSuffix(e.Name(), ".cu"):
			units = append(units, e.Name())
		}
	}
	sort.Strings(units)
	out := make([]Source, 0, len(units))
	for _, u := range units {
		b, _ := kernelFS.ReadFile(path.Join("kernels", u))
		out = append(out, Source{Name: u, Code: string(b), Headers: headers})
	}
	return out, nil
}

// compiled is one kernel file built for a device.
type compiled struct {
	name   string
	image  []byte // cubin, or NUL-terminated PTX
	cached bool   // read from the disk cache
}

// kernelCache compiles kernel files with NVRTC and keeps the results on disk.
type kernelCache struct {
	rtc *NVRTC
	dir string // "" disables the disk cache
}

// cacheKey hashes everything that determines the compiled image.
func (k *kernelCache) cacheKey(src Source, arch int, cubin bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "fanout-kernels v1\x00%s\x00%s\x00", src.Name, src.Code)
	names := make([]string, 0, len(src.Headers))
	for n := range src.Headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%s\x00", n, src.Headers[n])
	}
	fmt.Fprintf(h, "arch=%d cubin=%t opts=%q nvrtc=%s lib=%s", arch, cubin, compileOptions, k.rtc.Version(), k.rtc.Library())
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func (k *kernelCache) path(src Source, arch int, cubin bool) string {
	ext := "ptx"
	if cubin {
		ext = "cubin"
	}
	base := strings.TrimSuffix(src.Name, ".cu")
	return filepath.Join(k.dir, fmt.Sprintf("%s-%d-%s.%s", base, arch, k.cacheKey(src, arch, cubin), ext))
}

// build returns the image of src for a device of compute capability arch,
// from the disk cache when present.
func (k *kernelCache) build(src Source, devArch int) (compiled, error) {
	arch, cubin := k.rtc.target(devArch)
	var p string
	if k.dir != "" {
		p = k.path(src, arch, cubin)
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			return compiled{name: src.Name, image: terminate(b, cubin), cached: true}, nil
		}
	}
	img, err := k.rtc.Compile(src, arch, cubin, compileOptions)
	if err != nil {
		return compiled{}, err
	}
	if p != "" {
		writeAtomic(p, img) // a cache that cannot be written only costs time
	}
	return compiled{name: src.Name, image: terminate(img, cubin)}, nil
}

// forget removes a cached image (after the driver rejected it).
func (k *kernelCache) forget(src Source, devArch int) {
	if k.dir == "" {
		return
	}
	arch, cubin := k.rtc.target(devArch)
	os.Remove(k.path(src, arch, cubin))
}

// terminate appends the NUL that cuModuleLoadData needs after PTX text.
func terminate(b []byte, cubin bool) []byte {
	if cubin {
		return b
	}
	return append(b[:len(b):len(b)], 0)
}

// writeAtomic writes data to p through a temporary file and a rename, so
// that readers never see a partial file.
func writeAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		if werr != nil {
			return werr
		}
		return cerr
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// buildAll compiles (or loads from the cache) every kernel file in
// parallel; NVRTC needs no CUDA context.
func (k *kernelCache) buildAll(devArch int) ([]compiled, []Source, error) {
	srcs, err := KernelSources()
	if err != nil {
		return nil, nil, err
	}
	out := make([]compiled, len(srcs))
	errs := make([]error, len(srcs))
	var wg sync.WaitGroup
	for i := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = k.build(srcs[i], devArch)
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, nil, e
		}
	}
	return out, srcs, nil
}

// defaultCacheDir is os.UserCacheDir()/fanout/kernels, or "" when there is
// no user cache directory.
func defaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil || d == "" {
		return ""
	}
	return filepath.Join(d, "fanout", "kernels")
}

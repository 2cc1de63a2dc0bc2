package cuda

import "fmt"

// Library is what Probe found of one GPU library.
type Library struct {
	Name string // "CUDA driver (libcuda)", ...
	Path string // what was opened; "" when not found
	Note string // the version, or why it was not found
}

// Probe tries to open every GPU library fanout uses (the driver, NVRTC,
// cuBLAS, NCCL) and says what it found; it starts no device.
func Probe(libDir string) []Library {
	var out []Library
	add := func(name string, lib *library, note string, err error) {
		l := Library{Name: name, Note: note}
		if err != nil {
			l.Note = err.Error()
		} else if lib != nil {
			l.Path = lib.path
		}
		out = append(out, l)
	}
	d, err := loadDriver(libDir)
	note := ""
	if err == nil {
		if info, ierr := d.initDevice(0); ierr == nil {
			note = fmt.Sprintf("driver API %d.%d; device 0: %s", info.driverVer/1000, info.driverVer%1000/10, info.name)
		} else {
			note = "no usable device: " + ierr.Error()
		}
	}
	var dl *library
	if err == nil {
		dl = d.lib
	}
	add("CUDA driver (libcuda)", dl, note, err)
	rtc, err := LoadNVRTC(libDir)
	note = ""
	if err == nil {
		note = rtc.Version()
	}
	var rl, bl *library
	if err == nil {
		rl = rtc.lib
	}
	add("NVRTC (libnvrtc)", rl, note, err)
	blas, err := loadCublas(libDir)
	if err == nil {
		bl = blas.lib
	}
	add("cuBLAS (libcublas)", bl, "", err)
	nccl, err := LoadNCCL(libDir)
	note = ""
	if err == nil {
		v := nccl.Version()
		note = fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
	}
	var nl *library
	if err == nil {
		nl = nccl.lib
	}
	add("NCCL (libnccl)", nl, note, err)
	return out
}

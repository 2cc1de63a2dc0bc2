package cuda

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Error is a failed CUDA, NVRTC or cuBLAS call.
type Error struct {
	Call string // the C function, e.g. "cuMemAlloc_v2"
	Code int    // its status code
	Name string // the status's name, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda: %s failed: %s (%d)", e.Call, e.Name, e.Code)
}

// CUDA driver constants used here.
const (
	cudaSuccess             = 0
	cudaErrorOutOfMemory    = 2
	cudaErrorNotInitialized = 3
	cudaErrorNoDevice       = 100

	attrMaxSharedPerBlockOptin = 97
	attrClockRate              = 13 // kHz, the SM's peak
	attrMemoryClockRate        = 36 // kHz
	attrGlobalMemoryBusWidth   = 37 // bits
	attrMultiprocessorCount    = 16
	attrComputeCapMajor        = 75
	attrComputeCapMinor        = 76

	funcAttrMaxDynamicShared = 8

	memHostAllocPortable = 1

	eventDefault       = 0
	eventDisableTiming = 2

	streamNonBlocking = 1

	captureModeRelaxed = 2
)

// driver holds libcuda's entry points.
type driver struct {
	lib *library

	cuInit, cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName   uintptr
	cuDeviceGetAttribute, cuDeviceTotalMem, cuGetErrorName                       uintptr
	cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease, cuCtxSetCurrent         uintptr
	cuCtxSynchronize, cuMemAlloc, cuMemFree, cuMemGetInfo                        uintptr
	cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, cuMemcpyDtoDAsync                      uintptr
	cuMemsetD32Async, cuMemsetD8Async, cuMemHostAlloc, cuMemFreeHost             uintptr
	cuModuleLoadData, cuModuleUnload, cuModuleGetFunction, cuFuncSetAttribute    uintptr
	cuLaunchKernel, cuStreamCreate, cuStreamDestroy, cuStreamSynchronize         uintptr
	cuEventCreate, cuEventRecord, cuEventSynchronize, cuEventElapsedTime         uintptr
	cuEventDestroy, cuStreamBeginCapture, cuStreamEndCapture, cuGraphDestroy     uintptr
	cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy, cuMemcpyHtoD uintptr
	cuMemHostGetDevicePointer, cuMemHostRegister, cuMemHostUnregister            uintptr
	cuDeviceCanAccessPeer, cuCtxEnablePeerAccess                                 uintptr
	cuStreamCreateWithPriority, cuCtxGetStreamPriorityRange, cuStreamWaitEvent   uintptr
	cuOccupancyMaxActiveBlocksPerMultiprocessor                                  uintptr
}

// loadDriver opens libcuda.so.1 and resolves every entry point the backend
// uses.
func loadDriver(libDir string) (*driver, error) {
	lib, err := openLibrary("CUDA driver (libcuda)", libDir, []string{"libcuda.so.1", "libcuda.so"})
	if err != nil {
		return nil, err
	}
	d := &driver{lib: lib}
	err = lib.symbols(map[string]*uintptr{
		"cuInit":                                      &d.cuInit,
		"cuDriverGetVersion":                          &d.cuDriverGetVersion,
		"cuDeviceGetCount":                            &d.cuDeviceGetCount,
		"cuDeviceGet":                                 &d.cuDeviceGet,
		"cuDeviceGetName":                             &d.cuDeviceGetName,
		"cuDeviceGetAttribute":                        &d.cuDeviceGetAttribute,
		"cuDeviceTotalMem_v2":                         &d.cuDeviceTotalMem,
		"cuGetErrorName":                              &d.cuGetErrorName,
		"cuDevicePrimaryCtxRetain":                    &d.cuDevicePrimaryCtxRetain,
		"cuDevicePrimaryCtxRelease_v2":                &d.cuDevicePrimaryCtxRelease,
		"cuCtxSetCurrent":                             &d.cuCtxSetCurrent,
		"cuCtxSynchronize":                            &d.cuCtxSynchronize,
		"cuMemAlloc_v2":                               &d.cuMemAlloc,
		"cuMemFree_v2":                                &d.cuMemFree,
		"cuMemGetInfo_v2":                             &d.cuMemGetInfo,
		"cuMemcpyHtoD_v2":                             &d.cuMemcpyHtoD,
		"cuMemcpyHtoDAsync_v2":                        &d.cuMemcpyHtoDAsync,
		"cuMemcpyDtoHAsync_v2":                        &d.cuMemcpyDtoHAsync,
		"cuMemcpyDtoDAsync_v2":                        &d.cuMemcpyDtoDAsync,
		"cuMemsetD32Async":                            &d.cuMemsetD32Async,
		"cuMemsetD8Async":                             &d.cuMemsetD8Async,
		"cuMemHostAlloc":                              &d.cuMemHostAlloc,
		"cuMemFreeHost":                               &d.cuMemFreeHost,
		"cuMemHostGetDevicePointer_v2":                &d.cuMemHostGetDevicePointer,
		"cuMemHostRegister_v2":                        &d.cuMemHostRegister,
		"cuMemHostUnregister":                         &d.cuMemHostUnregister,
		"cuModuleLoadData":                            &d.cuModuleLoadData,
		"cuModuleUnload":                              &d.cuModuleUnload,
		"cuModuleGetFunction":                         &d.cuModuleGetFunction,
		"cuFuncSetAttribute":                          &d.cuFuncSetAttribute,
		"cuLaunchKernel":                              &d.cuLaunchKernel,
		"cuStreamCreate":                              &d.cuStreamCreate,
		"cuStreamDestroy_v2":                          &d.cuStreamDestroy,
		"cuStreamSynchronize":                         &d.cuStreamSynchronize,
		"cuEventCreate":                               &d.cuEventCreate,
		"cuEventRecord":                               &d.cuEventRecord,
		"cuEventSynchronize":                          &d.cuEventSynchronize,
		"cuEventElapsedTime":                          &d.cuEventElapsedTime,
		"cuEventDestroy_v2":                           &d.cuEventDestroy,
		"cuStreamBeginCapture_v2":                     &d.cuStreamBeginCapture,
		"cuStreamEndCapture":                          &d.cuStreamEndCapture,
		"cuGraphInstantiateWithFlags":                 &d.cuGraphInstantiateWithFlags,
		"cuGraphLaunch":                               &d.cuGraphLaunch,
		"cuGraphExecDestroy":                          &d.cuGraphExecDestroy,
		"cuGraphDestroy":                              &d.cuGraphDestroy,
		"cuDeviceCanAccessPeer":                       &d.cuDeviceCanAccessPeer,
		"cuCtxEnablePeerAccess":                       &d.cuCtxEnablePeerAccess,
		"cuStreamCreateWithPriority":                  &d.cuStreamCreateWithPriority,
		"cuCtxGetStreamPriorityRange":                 &d.cuCtxGetStreamPriorityRange,
		"cuStreamWaitEvent":                           &d.cuStreamWaitEvent,
		"cuOccupancyMaxActiveBlocksPerMultiprocessor": &d.cuOccupancyMaxActiveBlocksPerMultiprocessor,
	})
	if err != nil {
		return nil, fmt.Errorf("CUDA driver too old or unusable: %w", err)
	}
	return d, nil
}

// call invokes a driver function and turns a failure into an *Error.
//
//go:uintptrescapes
func (d *driver) call(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if code := int32(r); code != cudaSuccess {
		return d.err(name, int(code))
	}
	return nil
}

// err builds the Error for a failed call, naming the status.
func (d *driver) err(call string, code int) *Error {
	var p uintptr
	name := fmt.Sprintf("CUDA_ERROR_%d", code)
	r, _, _ := purego.SyscallN(d.cuGetErrorName, uintptr(code), uintptr(unsafe.Pointer(&p)))
	if int32(r) == cudaSuccess && p != 0 {
		name = goString(p)
	}
	return &Error{Call: call, Code: code, Name: name}
}

// deviceInfo describes one device.
type deviceInfo struct {
	ordinal      int
	handle       int32
	name         string
	major, minor int
	sms          int
	smemOptin    int
	totalMem     int64
	driverVer    int
	clockKHz     int // peak SM clock
	memClockKHz  int
	busBits      int
}

// arch is e.g. 90 for sm_90.
func (i deviceInfo) arch() int { return i.major*10 + i.minor }

// initDevice runs cuInit and describes device ordinal.
func (d *driver) initDevice(ordinal int) (deviceInfo, error) {
	info := deviceInfo{ordinal: ordinal}
	if err := d.call("cuInit", d.cuInit, 0); err != nil {
		return info, err
	}
	var n, ver int32
	if err := d.call("cuDriverGetVersion", d.cuDriverGetVersion, uintptr(unsafe.Pointer(&ver))); err != nil {
		return info, err
	}
	info.driverVer = int(ver)
	if err := d.call("cuDeviceGetCount", d.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return info, err
	}
	if ordinal < 0 || ordinal >= int(n) {
		return info, fmt.Errorf("cuda: device %d requested, %d device(s) present", ordinal, n)
	}
	var dev int32
	if err := d.call("cuDeviceGet", d.cuDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal)); err != nil {
		return info, err
	}
	info.handle = dev
	name := make([]byte, 256)
	if err := d.call("cuDeviceGetName", d.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(dev)); err != nil {
		return info, err
	}
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	info.name = string(name)
	attrs := []struct {
		attr int
		dst  *int
	}{
		{attrComputeCapMajor, &info.major}, {attrComputeCapMinor, &info.minor},
		{attrMultiprocessorCount, &info.sms}, {attrMaxSharedPerBlockOptin, &info.smemOptin},
		{attrClockRate, &info.clockKHz}, {attrMemoryClockRate, &info.memClockKHz}, {attrGlobalMemoryBusWidth, &info.busBits},
	}
	for _, a := range attrs {
		var v int32
		if err := d.call("cuDeviceGetAttribute", d.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a.attr), uintptr(dev)); err != nil {
			return info, err
		}
		*a.dst = int(v)
	}
	var total uint64
	if err := d.call("cuDeviceTotalMem_v2", d.cuDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(dev)); err != nil {
		return info, err
	}
	info.totalMem = int64(total)
	return info, nil
}

// memInfo returns the free and total device memory of the current context.
func (d *driver) memInfo() (free, total int64, err error) {
	var f, t uint64
	err = d.call("cuMemGetInfo_v2", d.cuMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)))
	return int64(f), int64(t), err
}

package job

import (
	"fmt"
	"github.com/fanout-gnn/fanout/train"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/backend/inproc"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// CheckThreads refuses a negative thread count.
func CheckThreads(n int) error {
	if n < 0 {
		return fmt.Errorf("threads: %d, want 0 (all cores) or a positive count", n)
	}
	return nil
}

// OpenBackend turns a device (auto, cpu, cuda or cuda:N) into a backend
// and its description. auto picks a working GPU and says which, or the
// CPU and says why (on log).
func OpenBackend(spec string, threads int, c CUDA, log io.Writer) (backend.Backend, string, error) {
	if err := CheckThreads(threads); err != nil {
		return nil, "", err
	}
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	opt := c.Options()
	switch {
	case spec == "cpu":
		be := cpu.New(threads)
		return be, be.Name(), nil
	case spec == "auto":
		if _, err := cuda.Available(opt); err != nil {
			fmt.Fprintf(log, "device auto: training on the CPU: %s\n", FallbackReason(err))
			be := cpu.New(threads)
			return be, be.Name(), nil
		}
		return openCUDA(opt)
	case spec == "cuda" || strings.HasPrefix(spec, "cuda:"):
		if n, ok := strings.CutPrefix(spec, "cuda:"); ok {
			d, err := strconv.Atoi(n)
			if err != nil || d < 0 {
				return nil, "", fmt.Errorf("--device %s: want cuda:N with N a device number", quote.Quote(spec))
			}
			opt.Device = d
		}
		return openCUDA(opt)
	}
	return nil, "", fmt.Errorf("--device %s: want auto, cpu, cuda or cuda:N", quote.Quote(spec))
}

// FallbackReason words why no GPU could be used; never blank.
func FallbackReason(err error) string {
	msg := ""
	if err != nil {
		msg = strings.TrimRight(strings.TrimSpace(err.Error()), ":")
	}
	if msg == "" {
		return "no usable CUDA device (the loader gave no reason)"
	}
	return msg
}

func openCUDA(opt cuda.Options) (backend.Backend, string, error) {
	be, err := cuda.New(opt)
	if err != nil {
		return nil, "", fmt.Errorf("--device cuda: %w", err)
	}
	return be, be.Name(), nil
}

// CloseBackend releases a backend's resources.
func CloseBackend(be backend.Backend) {
	if c, ok := be.(backend.Closer); ok {
		c.Close()
	}
}

// WithCapture gives be the capture capability the replay driver needs: its
// own (CUDA graphs) or a recording wrapper (any backend).
func WithCapture(be backend.Backend) backend.Backend {
	if _, ok := be.(backend.Capturer); ok {
		return be
	}
	return record.New(be)
}

// cudaOf finds the CUDA backend under be, for its counters.
func cudaOf(be backend.Backend) (*cuda.Backend, bool) {
	c, ok := be.(*cuda.Backend)
	return c, ok
}

// resolve is mode on be: train.Auto becomes replay on a GPU, eager elsewhere
// (train.Mode.Resolve).
func resolve(mode train.Mode, be backend.Backend) train.Mode {
	_, gpu := cudaOf(be)
	return mode.Resolve(gpu)
}

// allDevices is what AllDevices means: every GPU, or on the CPU one
// device per two cores.
func (j *Job) allDevices() (int, error) { return CountDevices(j.Device, j.CUDA) }

// CountDevices is every device of a kind: every GPU, or on the CPU
// (device "cpu") one device per two cores.
func CountDevices(device string, c CUDA) (int, error) {
	if device == "cpu" {
		return max(1, runtime.NumCPU()/2), nil
	}
	return cuda.DeviceCount(cuda.Options{LibDir: c.LibDir})
}

// openDevices opens j.Devices backends and their collective: CPU backends
// (threads split) joined in process, or GPUs 0..N-1 joined by NCCL. The
// mode is resolved as for one device (replay on GPUs).
func (j *Job) openDevices() ([]backend.Backend, []backend.Collective, train.Mode, error) {
	n := j.Devices
	device := j.Device
	if device == "auto" {
		device = "cuda"
		if _, err := cuda.Available(cuda.Options{LibDir: j.CUDA.LibDir, CacheDir: j.CUDA.CacheDir}); err != nil {
			fmt.Fprintf(j.Log, "device auto: training on %d CPU devices: %s\n", n, FallbackReason(err))
			device = "cpu"
		}
	}
	switch device {
	case "cpu":
		if cores := runtime.NumCPU(); n > cores {
			return nil, nil, train.Auto, fmt.Errorf("devices: %d CPU devices, but this host has %d cores; give at most %d (each device takes at least one)", n, cores, cores)
		}
		threads := j.Threads
		if threads == 0 {
			threads = runtime.NumCPU()
		}
		mode := j.Mode.Resolve(false)
		bes := make([]backend.Backend, n)
		for i := range bes {
			bes[i] = cpu.New(max(1, threads/n))
			if mode.Captures() {
				bes[i] = WithCapture(bes[i])
			}
		}
		comms, err := inproc.New(bes)
		if err != nil {
			return nil, nil, train.Auto, err
		}
		colls := make([]backend.Collective, n)
		for i, c := range comms {
			colls[i] = c
		}
		return bes, colls, mode, nil
	case "cuda":
		return j.openGPUs()
	}
	return nil, nil, train.Auto, fmt.Errorf("devices: %d devices need --device cpu or cuda (GPUs 0..%d), not %s", n, n-1, quote.Quote(j.Device))
}

// noMulticast keeps NVLink multicast (NVLS) off unless the environment
// already says otherwise.
func noMulticast() {
	if _, set := os.LookupEnv("NCCL_NVLS_ENABLE"); !set {
		os.Setenv("NCCL_NVLS_ENABLE", "0")
	}
}

// openGPUs opens GPUs 0..N-1 and joins them with NCCL.
func (j *Job) openGPUs() ([]backend.Backend, []backend.Collective, train.Mode, error) {
	n := j.Devices
	opt := j.CUDA.Options()
	have, err := cuda.DeviceCount(opt)
	if err != nil {
		return nil, nil, train.Auto, fmt.Errorf("devices: %w", err)
	}
	if have < n {
		return nil, nil, train.Auto, fmt.Errorf("devices: %d GPUs asked for, %d present", n, have)
	}
	noMulticast()
	nccl, err := cuda.LoadNCCL(j.CUDA.LibDir)
	if err != nil {
		return nil, nil, train.Auto, fmt.Errorf("devices: several GPUs need NCCL: %w", err)
	}
	gpus := make([]*cuda.Backend, 0, n)
	fail := func(err error) ([]backend.Backend, []backend.Collective, train.Mode, error) {
		for _, g := range gpus {
			g.Close()
		}
		return nil, nil, train.Auto, err
	}
	for i := 0; i < n; i++ {
		o := opt
		o.Device = i
		g, err := cuda.New(o)
		if err != nil {
			return fail(fmt.Errorf("devices: GPU %d: %w", i, err))
		}
		gpus = append(gpus, g)
	}
	comms, err := nccl.NewComms(gpus)
	if err != nil {
		return fail(fmt.Errorf("devices: %w", err))
	}
	bes := make([]backend.Backend, n)
	colls := make([]backend.Collective, n)
	for i := range gpus {
		bes[i], colls[i] = gpus[i], comms[i]
	}
	sum := "NCCL's all-reduce (--nccl-all-reduce)"
	if !j.CUDA.NCCLAllReduce {
		pcs, err := cuda.NewPeerGroup(comms)
		if err == nil {
			for i, p := range pcs {
				colls[i] = p
			}
			sum = "kernels reading the peers' memory"
		} else {
			sum = fmt.Sprintf("NCCL's all-reduce (no peer sum: %v)", err)
		}
	}
	fmt.Fprintf(j.Log, "NCCL %d joins %d GPUs; gradients summed by %s\n", nccl.Version(), n, sum)
	return bes, colls, resolve(j.Mode, gpus[0]), nil
}

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/fanout-gnn/fanout/backend"
)

// NCCL, loaded at run time like the other CUDA libraries, gives the CUDA
// backends of one process a backend.Collective: each rank's reductions are
// ncclAllReduce calls on that rank's stream, so they run in the order of its
// other ops and are captured with its step into a CUDA graph.

var ncclSonames = []string{"libnccl.so.2", "libnccl.so"}

// Values of nccl.h's enums (ncclResult_t, ncclDataType_t, ncclRedOp_t).
const (
	ncclSuccess = 0
	ncclInt32   = 2
	ncclFloat32 = 7
	ncclSum     = 0
	ncclMax     = 2
)

// NCCL is the loaded library.
type NCCL struct {
	lib                                                             *library
	commInitAll, allReduce, commDestroy, getErrorString, getVersion uintptr
	groupStart, groupEnd, send, recv                                uintptr
}

// LoadNCCL opens libnccl (libDir first, when set).
func LoadNCCL(libDir string) (*NCCL, error) {
	lib, err := openLibrary("NCCL (libnccl)", libDir, ncclSonames)
	if err != nil {
		return nil, err
	}
	n := &NCCL{lib: lib}
	if err := lib.symbols(map[string]*uintptr{
		"ncclCommInitAll":    &n.commInitAll,
		"ncclAllReduce":      &n.allReduce,
		"ncclCommDestroy":    &n.commDestroy,
		"ncclGetErrorString": &n.getErrorString,
		"ncclGetVersion":     &n.getVersion,
		"ncclGroupStart":     &n.groupStart,
		"ncclGroupEnd":       &n.groupEnd,
		"ncclSend":           &n.send,
		"ncclRecv":           &n.recv,
	}); err != nil {
		return nil, err
	}
	return n, nil
}

// Version is NCCL's version code (e.g. 22803 for 2.28.3).
func (n *NCCL) Version() int {
	var v int32
	purego.SyscallN(n.getVersion, uintptr(unsafe.Pointer(&v)))
	return int(v)
}

func (n *NCCL) err(call string, code uintptr) error {
	if int32(code) == ncclSuccess {
		return nil
	}
	r, _, _ := purego.SyscallN(n.getErrorString, code)
	return fmt.Errorf("%s: %s (NCCL error %d)", call, goString(r), int32(code))
}

// Comm is one rank's NCCL communicator; it implements backend.Collective.
type Comm struct {
	n          *NCCL
	comm       uintptr // ncclComm_t
	be         *Backend
	rank, size int
}

var _ backend.Collective = (*Comm)(nil)

// NewComms makes one communicator per backend over their devices
// (ncclCommInitAll): rank i drives bes[i]. The backends must be on
// distinct devices.
func (n *NCCL) NewComms(bes []*Backend) ([]*Comm, error) {
	if len(bes) == 0 {
		return nil, errors.New("nccl: no devices")
	}
	devs := make([]int32, len(bes))
	seen := map[int]bool{}
	for i, b := range bes {
		devs[i] = int32(b.dev.ordinal)
		if seen[b.dev.ordinal] {
			return nil, fmt.Errorf("nccl: device %d given twice (one process drives each GPU once)", b.dev.ordinal)
		}
		seen[b.dev.ordinal] = true
	}
	comms := make([]uintptr, len(bes))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, _, _ := purego.SyscallN(n.commInitAll, uintptr(unsafe.Pointer(&comms[0])), uintptr(len(bes)), uintptr(unsafe.Pointer(&devs[0])))
	if err := n.err("ncclCommInitAll", r); err != nil {
		return nil, err
	}
	out := make([]*Comm, len(bes))
	for i, b := range bes {
		out[i] = &Comm{n: n, comm: comms[i], be: b, rank: i, size: len(bes)}
	}
	return out, nil
}

func (c *Comm) Rank() int { return c.rank }
func (c *Comm) Size() int { return c.size }

// AllReduceSum sums the F32 buffer across ranks in place, on the rank's
// stream.
func (c *Comm) AllReduceSum(buf backend.Buffer) {
	c.allReduce("AllReduceSum", buf, backend.F32, ncclFloat32, ncclSum)
}

// AllReduceMax takes the element-wise maximum of the I32 buffer across ranks
// in place, on the rank's stream.
func (c *Comm) AllReduceMax(buf backend.Buffer) {
	c.allReduce("AllReduceMax", buf, backend.I32, ncclInt32, ncclMax)
}

func (c *Comm) allReduce(op string, buf backend.Buffer, dt backend.DType, ncclType, ncclOp uintptr) {
	b := c.be
	k := b.begin(op)
	defer k.end()
	n := 0
	if buf != nil {
		n = buf.Len()
	}
	x := k.buf("buf", buf, dt, n)
	if !k.ok || n == 0 {
		return
	}
	r, _, _ := purego.SyscallN(c.n.allReduce, x.addr(), x.addr(), uintptr(n), ncclType, ncclOp, c.comm, b.stream)
	if err := c.n.err("ncclAllReduce", r); err != nil {
		k.fail(err)
	}
}

// AllToAll sends chunk p of send to rank p and receives rank p's chunk
// into chunk p of recv (I32 or F32; see backend.Collective): one
// ncclSend and one ncclRecv per rank, itself included, in one NCCL group
// on the rank's stream, so it is captured with the step.
func (c *Comm) AllToAll(send, recv backend.Buffer, chunk int) {
	b := c.be
	k := b.begin("AllToAll")
	defer k.end()
	if !k.ok {
		return
	}
	dt, nt := backend.F32, uintptr(ncclFloat32)
	if send != nil && send.DType() == backend.I32 {
		dt, nt = backend.I32, ncclInt32
	}
	if chunk < 0 {
		k.failf("chunk %d", chunk)
		return
	}
	s := k.buf("send", send, dt, c.size*chunk)
	r := k.buf("recv", recv, dt, c.size*chunk)
	if !k.ok || chunk == 0 {
		return
	}
	step := uintptr(chunk) * uintptr(dt.Size())
	if err := c.n.err("ncclGroupStart", call0(c.n.groupStart)); err != nil {
		k.fail(err)
		return
	}
	var first error
	for p := 0; p < c.size; p++ {
		rs, _, _ := purego.SyscallN(c.n.send, s.addr()+uintptr(p)*step, uintptr(chunk), nt, uintptr(p), c.comm, b.stream)
		rr, _, _ := purego.SyscallN(c.n.recv, r.addr()+uintptr(p)*step, uintptr(chunk), nt, uintptr(p), c.comm, b.stream)
		if first == nil {
			first = errors.Join(c.n.err("ncclSend", rs), c.n.err("ncclRecv", rr))
		}
	}
	if err := c.n.err("ncclGroupEnd", call0(c.n.groupEnd)); first == nil {
		first = err
	}
	if first != nil {
		k.fail(first)
	}
}

func call0(fn uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn)
	return r
}

// Close destroys the communicator.
func (c *Comm) Close() error {
	if c.comm == 0 {
		return nil
	}
	r, _, _ := purego.SyscallN(c.n.commDestroy, c.comm)
	c.comm = 0
	return c.n.err("ncclCommDestroy", r)
}

// DeviceCount is the number of CUDA devices the driver sees.
func DeviceCount(opt Options) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d, err := loadDriver(opt.LibDir)
	if err != nil {
		return 0, err
	}
	if err := d.call("cuInit", d.cuInit, 0); err != nil {
		return 0, err
	}
	var n int32
	if err := d.call("cuDeviceGetCount", d.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// UniqueID is NCCL's ncclUniqueId: the 128 bytes rank 0 makes and every
// rank of a multi-process job needs (exchanged through the rendezvous
// store).
type UniqueID struct{ Internal [128]byte }

// GetUniqueID makes a new job id (rank 0).
func (n *NCCL) GetUniqueID() (UniqueID, error) {
	var id UniqueID
	fn, err := n.lib.sym("ncclGetUniqueId")
	if err != nil {
		return id, err
	}
	r, _, _ := purego.SyscallN(fn, uintptr(unsafe.Pointer(&id)))
	return id, n.err("ncclGetUniqueId", r)
}

// NewCommRank joins this process's GPU (be) to a job of world ranks as
// rank (ncclCommInitRank; every rank must call it with the same id).
func (n *NCCL) NewCommRank(be *Backend, world, rank int, id UniqueID) (*Comm, error) {
	fn, err := n.lib.sym("ncclCommInitRank")
	if err != nil {
		return nil, err
	}
	var initRank func(comm *uintptr, nranks int32, id UniqueID, rank int32) int32
	purego.RegisterFunc(&initRank, fn) // the id is a 128-byte struct passed by value
	var comm uintptr
	c := be.beginAlways("ncclCommInitRank") // the device's context, current on this thread
	r := initRank(&comm, int32(world), id, int32(rank))
	c.end()
	if err := n.err("ncclCommInitRank", uintptr(uint32(r))); err != nil {
		return nil, err
	}
	return &Comm{n: n, comm: comm, be: be, rank: rank, size: world}, nil
}

// Abort tears the communicator down without waiting for peers (a peer died:
// ncclCommAbort), so that no rank hangs in a collective.
func (c *Comm) Abort(error) {
	if c.comm == 0 {
		return
	}
	if fn, err := c.n.lib.sym("ncclCommAbort"); err == nil {
		purego.SyscallN(fn, c.comm)
		c.comm = 0
	}
}
